"""The errdex exception tree, documented in one place.

Every error errdex raises on purpose is an :class:`ErrdexError` carrying a stable ``code``
(shown by the CLI and, later, in the HTTP error shape) and the context it is about::

    ErrdexError                      code
    ├── UsageError                   usage          bad flag values, unknown settings
    │   └── SettingsError            settings       an invalid config file or ERRDEX_* value
    ├── SourceError                  source         a source that cannot be read at all
    │   ├── SourceNotFoundError      source-not-found
    │   └── RevisionNotFoundError    revision-not-found
    ├── RecordFormatError            record-format  a file that is not seed or errdex JSONL
    ├── RecordNotFoundError          not-found      an unknown record id
    ├── StoreError                   store          the database cannot be opened or written
    ├── ExtractionError              extraction     one file could not be mined (becomes a Problem)
    └── MissingDependencyError       missing-dependency  an optional extra is not installed

Per-file failures never abort a run: the pipeline turns an :class:`ExtractionError` into a
:class:`~errdex.models.Problem` in the run report (``--strict`` makes them raise instead).
"""

from __future__ import annotations


class ErrdexError(Exception):
    """Base of every error errdex raises on purpose.

    Attributes:
        code: A stable, kebab-case identifier of the kind of error.
    """

    code = "errdex"

    def __reduce__(self) -> tuple[object, ...]:
        # Subclasses take keyword-only context, which the default pickling (the class called
        # with ``args``) loses: a worker process's error would reach the parent as a broken
        # pool instead of itself.
        return (_rebuilt, (type(self), self.args, self.__dict__))


def _rebuilt(
    cls: type[ErrdexError], args: tuple[object, ...], state: dict[str, object]
) -> ErrdexError:
    """Unpickle an :class:`ErrdexError`: its arguments and attributes as they were."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class UsageError(ErrdexError):
    """The caller asked for something that cannot be done as asked."""

    code = "usage"


class SettingsError(UsageError):
    """A setting from a config file, the environment or a flag is invalid.

    Attributes:
        name: The setting's name.
        origin: Where the bad value came from (``"env ERRDEX_DB"``, a file path, ``"flag"``).
    """

    code = "settings"

    def __init__(self, message: str, *, name: str = "", origin: str = "") -> None:
        super().__init__(message)
        self.name = name
        self.origin = origin


class SourceError(ErrdexError):
    """A source to mine cannot be read at all.

    Attributes:
        source: The source as the user wrote it.
    """

    code = "source"

    def __init__(self, message: str, *, source: str = "") -> None:
        super().__init__(message)
        self.source = source


class SourceNotFoundError(SourceError):
    """The path, package or repository does not exist."""

    code = "source-not-found"


class RevisionNotFoundError(SourceError):
    """The git revision does not name a commit of the repository.

    Attributes:
        revision: The revision as the user wrote it.
    """

    code = "revision-not-found"

    def __init__(self, message: str, *, source: str = "", revision: str = "") -> None:
        super().__init__(message, source=source)
        self.revision = revision


class RecordFormatError(ErrdexError):
    """A line of an imported file is not a valid seed or errdex record.

    Attributes:
        path: The file being read.
        line: The 1-based line number of the bad line.
    """

    code = "record-format"

    def __init__(self, message: str, *, path: str = "", line: int = 0) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


class RecordNotFoundError(ErrdexError):
    """No record has the requested id.

    Attributes:
        record_id: The id asked for.
    """

    code = "not-found"

    def __init__(self, message: str, *, record_id: str = "") -> None:
        super().__init__(message)
        self.record_id = record_id


class StoreError(ErrdexError):
    """The record store cannot be opened, read or written.

    Attributes:
        location: The database path or DSN.
    """

    code = "store"

    def __init__(self, message: str, *, location: str = "") -> None:
        super().__init__(message)
        self.location = location


class ExtractionError(ErrdexError):
    """One file of a source could not be mined.

    The pipeline turns it into a :class:`~errdex.models.Problem`; it only propagates under
    ``strict`` settings.

    Attributes:
        path: The file's path inside the source.
        kind: The problem kind (a :class:`~errdex.models.ProblemKind` value).
        line: The 1-based line of the failure, or 0 when unknown.
    """

    code = "extraction"

    def __init__(self, message: str, *, path: str, kind: str, line: int = 0) -> None:
        super().__init__(message)
        self.path = path
        self.kind = kind
        self.line = line


class MissingDependencyError(ErrdexError):
    """An optional extra that a feature needs is not installed.

    Attributes:
        extra: The name of the extra (``web``, ``postgres`` …).
    """

    code = "missing-dependency"

    def __init__(self, feature: str, *, extra: str) -> None:
        super().__init__(f"{feature} needs the '{extra}' extra: pip install 'errdex[{extra}]'")
        self.extra = extra
