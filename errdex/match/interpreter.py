"""The messages Python itself raises, to tell them from a library's raise sites.

``AttributeError: 'NoneType' object has no attribute 'foo'`` comes from the interpreter (an
attribute looked up on ``None``), not from a library's ``raise``, though a library template
such as ``{target} has no attribute {name}`` produces it too. A paste whose message is one of
CPython's own (from its C code, 3.8 to 3.13) is told as such, and a record it matches is no
exact match without a frame at its line (see :meth:`errdex.match.explain.Explainer.explain`).

Each message is a template in errdex's own syntax, ``{}`` for a hole, matched literal after
literal (:func:`errdex.match.compile.match_literals`): linear whatever the paste.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Final

from errdex.match.compile import by_words, filed_under, match_literals


@dataclass(frozen=True)
class InterpreterMessage:
    """A message the interpreter raises.

    Attributes:
        error_class: The class it is raised with (its subclasses count too).
        template: The message, ``{}`` for each hole.
        meaning: What it says happened, in a sentence.
        module: The standard library module that raises it, or empty for the interpreter.
        carrier: The class of another package that passes the message on (an operating
            system error's text in ``httpx.ConnectError``), or empty.
    """

    error_class: str
    template: str
    meaning: str
    module: str = ""
    carrier: str = ""

    @property
    def general(self) -> bool:
        """Whether the message is all hole (``KeyError: 'x'``): said, not held against records."""
        return bool(self.template) and not self.template.replace("{}", "")

    @property
    def maker(self) -> str:
        """Who makes the message: ``Python itself``, a module, or the operating system."""
        if self.carrier:
            return "the operating system"
        return f"Python's {self.module} module" if self.module else "Python itself"

    def describe(self, error_class: str | None = None) -> str:
        """Say that Python raised it (as ``error_class``, a subclass), and what happened."""
        if self.carrier:
            return f"{self.carrier} passes on an error of the operating system: {self.meaning}."
        who = self.maker
        if self.error_class in _LOGGED:
            return f"{who} logs this at {self.error_class} level: {self.meaning}."
        if self.module == "argparse":
            return f"{who} prints this under the usage and exits with status 2: {self.meaning}."
        return f"{who} raises this {error_class or self.error_class}: {self.meaning}."


_LOGGED: Final = frozenset({"ERROR", "WARNING"})
"""The levels a standard library module logs a message of the table at, in place of a class."""


_MESSAGES: tuple[tuple[str, str, str], ...] = (
    # class, template, meaning
    (
        "AttributeError",
        "'{}' object has no attribute '{}'",
        "an attribute was looked up on a value that does not have it"
        " (often None where an object was expected)",
    ),
    (
        "AttributeError",
        "module '{}' has no attribute '{}'",
        "a name was looked up in a module that does not define it"
        " (another version of the module, or a file of yours shadowing it)",
    ),
    (
        "AttributeError",
        "type object '{}' has no attribute '{}'",
        "an attribute was looked up on a class that does not have it",
    ),
    (
        "AttributeError",
        "'{}' object attribute '{}' is read-only",
        "an attribute that cannot be set was assigned",
    ),
    (
        "AttributeError",
        "property '{}' of '{}' object has no setter",
        "a property without a setter was assigned",
    ),
    ("AttributeError", "can't set attribute{}", "an attribute that cannot be set was assigned"),
    (
        "TypeError",
        "'{}' object is not subscriptable",
        "a value was indexed (x[...]) that does not support it (often None)",
    ),
    (
        "TypeError",
        "'{}' object is not callable",
        "a value was called (x(...)) that is not a function or class",
    ),
    (
        "TypeError",
        "'{}' object is not iterable",
        "a value was looped over or unpacked that is not iterable (often None)",
    ),
    (
        "TypeError",
        "argument of type '{}' is not iterable",
        "`in` was used on a value that is not a container (often None)",
    ),
    (
        "TypeError",
        "'{}' object does not support item assignment",
        "an item of an immutable value was assigned (x[...] = ...)",
    ),
    (
        "TypeError",
        "'{}' object does not support item deletion",
        "an item of a value that does not support it was deleted",
    ),
    (
        "TypeError",
        "'{}' object cannot be interpreted as an integer",
        "a value that is not an integer was used where one is needed",
    ),
    (
        "TypeError",
        "unsupported operand type(s) for {}: '{}' and '{}'",
        "an operator was applied to values of types that do not support it",
    ),
    (
        "TypeError",
        "'{}' not supported between instances of '{}' and '{}'",
        "values of types that cannot be compared were compared",
    ),
    (
        "TypeError",
        "bad operand type for unary {}: '{}'",
        "a unary operator was applied to a value that does not support it",
    ),
    (
        "TypeError",
        'can only concatenate {} (not "{}") to {}',
        "values of different types were added with +",
    ),
    (
        "TypeError",
        "{}() got an unexpected keyword argument '{}'",
        "a function was called with a keyword argument it does not take"
        " (another version of its library?)",
    ),
    (
        "TypeError",
        "{}() got multiple values for argument '{}'",
        "an argument was passed both by position and by keyword",
    ),
    (
        "TypeError",
        "{}() missing {} required positional argument{}",
        "a function was called without all of its required arguments",
    ),
    (
        "TypeError",
        "{}() missing {} required keyword-only argument{}",
        "a function was called without all of its required keyword arguments",
    ),
    (
        "TypeError",
        "{}() takes {} positional argument{} but {} given",
        "a function was called with more positional arguments than it takes",
    ),
    (
        "TypeError",
        "{}() takes no arguments",
        "a function or class that takes no arguments was called with some",
    ),
    (
        "TypeError",
        "object of type '{}' has no len()",
        "len() was called on a value without a length (often None)",
    ),
    (
        "TypeError",
        "unhashable type: '{}'",
        "a mutable value (list, dict, set) was used as a dict key or set member",
    ),
    (
        "TypeError",
        "cannot unpack non-iterable {} object",
        "a value that is not a sequence was unpacked into several names (often None)",
    ),
    (
        "TypeError",
        "string indices must be integers{}",
        "a string was indexed with a string (often a JSON string not yet parsed)",
    ),
    (
        "TypeError",
        "list indices must be integers or slices, not {}",
        "a list was indexed with a value that is not an integer",
    ),
    (
        "TypeError",
        "tuple indices must be integers or slices, not {}",
        "a tuple was indexed with a value that is not an integer",
    ),
    (
        "TypeError",
        "a bytes-like object is required, not '{}'",
        "text was given where bytes are needed",
    ),
    (
        "TypeError",
        "expected str, bytes or os.PathLike object, not {}",
        "a value that is not a path was given as a path (often None)",
    ),
    (
        "TypeError",
        "sequence item {}: expected str instance, {} found",
        "str.join() was given an item that is not a string",
    ),
    (
        "TypeError",
        "{} argument must be a string{}",
        "a conversion was given a value it cannot convert (often None)",
    ),
    (
        "TypeError",
        "object {} can't be used in 'await' expression",
        "a value that is not awaitable was awaited",
    ),
    (
        "IndexError",
        "list index out of range",
        "a list was indexed past its end (often an empty list)",
    ),
    ("IndexError", "tuple index out of range", "a tuple was indexed past its end"),
    ("IndexError", "string index out of range", "a string was indexed past its end"),
    ("IndexError", "list assignment index out of range", "an item past a list's end was assigned"),
    ("IndexError", "pop from empty list", "pop() was called on an empty list"),
    ("IndexError", "pop from an empty deque", "pop() was called on an empty deque"),
    (
        "NameError",
        "name '{}' is not defined",
        "a name was used that no assignment or import defines (a typo, or a missing import)",
    ),
    (
        "UnboundLocalError",
        "local variable '{}' referenced before assignment",
        "a local name was read before the function assigned it",
    ),
    (
        "UnboundLocalError",
        "cannot access local variable '{}' where it is not associated with a value",
        "a local name was read before the function assigned it",
    ),
    (
        "ValueError",
        "too many values to unpack (expected {})",
        "a sequence was unpacked into fewer names than it has items",
    ),
    (
        "ValueError",
        "not enough values to unpack (expected {}, got {})",
        "a sequence was unpacked into more names than it has items",
    ),
    (
        "ValueError",
        "invalid literal for int() with base {}: {}",
        "int() was given text that is not an integer",
    ),
    (
        "ValueError",
        "could not convert string to float: {}",
        "float() was given text that is not a number",
    ),
    ("ValueError", "{} is not in list", "list.index() looked for a value the list does not hold"),
    (
        "ValueError",
        "list.remove(x): x not in list",
        "list.remove() was given a value the list does not hold",
    ),
    (
        "ValueError",
        "substring not found",
        "str.index() looked for text the string does not contain",
    ),
    (
        "ValueError",
        "math domain error",
        "a math function was given a value outside its domain (sqrt or log of a negative number)",
    ),
    ("ValueError", "max() arg is an empty sequence", "max() was given nothing"),
    ("ValueError", "min() arg is an empty sequence", "min() was given nothing"),
    ("ValueError", "max() iterable argument is empty", "max() was given nothing"),
    ("ValueError", "min() iterable argument is empty", "min() was given nothing"),
    (
        "ValueError",
        "I/O operation on closed file{}",
        "a file was read or written after it was closed",
    ),
    (
        "ValueError",
        "cannot convert float NaN to integer",
        "int() was given a NaN (a missing value: pandas reads an empty cell of a column of"
        " numbers as NaN, and such a column cannot be made integers)",
    ),
    (
        "OverflowError",
        "cannot convert float infinity to integer",
        "int() was given an infinite float (a division by zero in floats, or an overflow)",
    ),
    ("ZeroDivisionError", "division by zero", "a number was divided by zero"),
    ("ZeroDivisionError", "float division by zero", "a number was divided by zero"),
    ("ZeroDivisionError", "integer division or modulo by zero", "a number was divided by zero"),
    ("ZeroDivisionError", "integer modulo by zero", "a number was divided by zero"),
    (
        "ModuleNotFoundError",
        "No module named '{}'",
        "an import found no such module in this environment"
        " (not installed, or installed in another environment)",
    ),
    (
        "ImportError",
        "cannot import name '{}' from '{}'{}",
        "a module does not define the name imported from it"
        " (another version of it, or a circular import)",
    ),
    (
        "ImportError",
        "attempted relative import with no known parent package",
        "a relative import ran in a file executed as a script",
    ),
    (
        "RecursionError",
        "maximum recursion depth exceeded{}",
        "calls nested too deep, usually a function that calls itself without end",
    ),
    (
        "RuntimeError",
        "dictionary changed size during iteration",
        "a dict was changed while a loop went over it",
    ),
    (
        "RuntimeError",
        "Set changed size during iteration",
        "a set was changed while a loop went over it",
    ),
    (
        "RuntimeError",
        "dictionary keys changed during iteration",
        "a dict was changed while a loop went over it",
    ),
    ("RuntimeError", "generator raised StopIteration", "a generator let a StopIteration out"),
    ("RuntimeError", "cannot reuse already awaited coroutine", "a coroutine was awaited twice"),
    (
        "OverflowError",
        "int too large to convert to float",
        "an integer too large for a float was converted",
    ),
    ("OverflowError", "math range error", "a math function's result is too large for a float"),
    ("KeyError", "'popitem(): dictionary is empty'", "popitem() was called on an empty dict"),
    ("StopIteration", "", "next() was called on an exhausted iterator"),
    (
        "KeyError",
        "{}",
        "a dict (or another mapping) was looked up with a key it does not hold;"
        " the key is the message",
    ),
    ("SyntaxError", "invalid syntax{}", "the code does not parse"),
    ("IndentationError", "unexpected indent", "a line is indented where no block starts"),
    ("IndentationError", "expected an indented block{}", "a block has no indented body"),
    (
        "IndentationError",
        "unindent does not match any outer indentation level",
        "a line's indentation matches no enclosing block",
    ),
)

_OS_REASONS: Final[tuple[str, ...]] = (
    "No such file or directory",
    "Permission denied",
    "Is a directory",
    "Not a directory",
    "File exists",
    "Directory not empty",
    "No space left on device",
    "Read-only file system",
    "Too many open files",
    "Connection refused",
    "Connection reset by peer",
    "Connection timed out",
    "Broken pipe",
    "Address already in use",
    "Cannot assign requested address",
    "Network is unreachable",
    "No route to host",
    "Name or service not known",
    "Temporary failure in name resolution",
    "nodename nor servname provided, or not known",
)
"""What the operating system says (``strerror``) for the errors users meet most."""

_MESSAGES += tuple(
    (
        "OSError",
        f"[Errno {{}}] {reason}{{}}",
        "the operating system refused the operation: " + reason.lower(),
    )
    for reason in _OS_REASONS
)

_LIBRARY: tuple[tuple[str, str, str, str], ...] = (
    # module, class, template, meaning: the standard library's messages users meet most
    (
        "json",
        "JSONDecodeError",
        "Expecting value: line {} column {} (char {})",
        "the text given to json.loads is not JSON (often an empty body or an HTML error page)",
    ),
    (
        "json",
        "JSONDecodeError",
        "Extra data: line {} column {} (char {})",
        "the text holds more than one JSON value (JSON Lines read as one document?)",
    ),
    (
        "json",
        "JSONDecodeError",
        "Expecting property name enclosed in double quotes: line {} column {} (char {})",
        "the text is not strict JSON (single quotes or a trailing comma)",
    ),
    (
        "json",
        "JSONDecodeError",
        "Unterminated string starting at: line {} column {} (char {})",
        "the text ends inside a string (cut short?)",
    ),
    (
        "json",
        "JSONDecodeError",
        "Expecting '{}' delimiter: line {} column {} (char {})",
        "the text is not valid JSON at that place",
    ),
    (
        "json",
        "TypeError",
        "Object of type {} is not JSON serializable",
        "json.dumps was given a value it cannot write (a datetime, a set, an object):"
        " convert it or pass default=",
    ),
    (
        "datetime",
        "ValueError",
        "time data {} does not match format {}",
        "strptime was given text in another format than the one it was told",
    ),
    (
        "datetime",
        "ValueError",
        "unconverted data remains: {}",
        "strptime's format does not cover the whole text",
    ),
    (
        "datetime",
        "TypeError",
        "can't compare offset-naive and offset-aware datetimes",
        "a datetime with a time zone was compared with one without",
    ),
    (
        "datetime",
        "TypeError",
        "can't subtract offset-naive and offset-aware datetimes",
        "a datetime with a time zone was subtracted from one without",
    ),
    (
        "argparse",
        "SystemExit",
        "unrecognized arguments: {}",
        "the command line holds arguments the program does not define (a misspelt option, an"
        " option of another version, or one of a plugin that is not installed)",
    ),
    (
        "argparse",
        "SystemExit",
        "the following arguments are required: {}",
        "the command line lacks arguments the program requires",
    ),
    (
        "argparse",
        "SystemExit",
        "argument {}: invalid choice: {} (choose from {})",
        "an argument's value is none of the choices the program accepts",
    ),
    (
        "argparse",
        "SystemExit",
        "argument {}: expected one argument",
        "an option that takes a value was given none",
    ),
    (
        "argparse",
        "SystemExit",
        "argument {}: invalid {} value: {}",
        "an argument's value cannot be read as the type the program asks for (int, float …)",
    ),
    (
        "asyncio",
        "ERROR",
        "Task was destroyed but it is pending!{}",
        "a task was garbage-collected while it still ran: nothing kept a reference to it (keep"
        " what asyncio.create_task returns, and await or cancel it before the loop closes)",
    ),
    (
        "asyncio",
        "ERROR",
        "Task exception was never retrieved{}",
        "a task failed and nothing awaited it or read its exception: the task's error and its"
        " traceback follow",
    ),
    (
        "asyncio",
        "ERROR",
        "Future exception was never retrieved{}",
        "a future failed and nothing awaited it or read its exception: its error follows",
    ),
    (
        "asyncio",
        "OSError",
        "[Errno {}] error while attempting to bind on address {}: {}",
        "a server could not listen on that address: another process (or an earlier run of"
        " this one) already uses the port, or the address is not one of this machine's",
    ),
    (
        "asyncio",
        "RuntimeError",
        "asyncio.run() cannot be called from a running event loop",
        "asyncio.run was called where a loop already runs"
        " (in Jupyter: await the coroutine instead)",
    ),
    (
        "asyncio",
        "RuntimeError",
        "This event loop is already running",
        "a running event loop was asked to run again (in Jupyter: await instead)",
    ),
    (
        "asyncio",
        "RuntimeError",
        "Event loop is closed",
        "a closed event loop was used (often at exit, by an object cleaned up late)",
    ),
    (
        "asyncio",
        "RuntimeError",
        "no running event loop",
        "an async API was used outside a running event loop",
    ),
    (
        "asyncio",
        "RuntimeError",
        "Task {} got Future {} attached to a different loop",
        "a task awaited something (a lock, a queue, a client's connection) made for another"
        " event loop: often one made at import time or by a test fixture, before the loop"
        " that awaits it started",
    ),
    (
        "asyncio",
        "RuntimeError",
        "There is no current event loop in thread {}.",
        "an async API was used in a thread without an event loop",
    ),
    (
        "asyncio",
        "RuntimeWarning",
        "coroutine {} was never awaited",
        "an async function was called without await, so it never ran",
    ),
    (
        "subprocess",
        "CalledProcessError",
        "Command {} returned non-zero exit status {}.",
        "the command that was run failed; its own output says why",
    ),
    (
        "codecs",
        "UnicodeDecodeError",
        "{} codec can't decode byte {} in position {}: {}",
        "bytes were decoded with the wrong encoding (open the file with encoding=...)",
    ),
    (
        "codecs",
        "UnicodeEncodeError",
        "{} codec can't encode character{} in position {}: {}",
        "text was written with an encoding that cannot show it (set encoding='utf-8')",
    ),
    (
        "pickle",
        "TypeError",
        "cannot pickle {} object",
        "a value that cannot be pickled was sent to another process or saved",
    ),
    (
        "concurrent.futures",
        "RuntimeError",
        "cannot schedule new futures after {}shutdown",
        "work was submitted to an executor that was shut down",
    ),
    # SQLite's own messages, which the sqlite3 module raises and database layers (django's
    # ``django.db.utils.OperationalError``, SQLAlchemy's) raise again as their own.
    (
        "sqlite3",
        "OperationalError",
        "no such table: {}",
        "a query names a table the database does not have: the schema was not created or"
        " migrated (django: python manage.py migrate), or the program opened another database"
        " file than the one it set up (a relative path, resolved from another directory)",
    ),
    (
        "sqlite3",
        "OperationalError",
        "no such column: {}",
        "a query names a column the table does not have: the database's schema is older than"
        " the code (run the migrations)",
    ),
    (
        "sqlite3",
        "OperationalError",
        "table {} already exists",
        "a table was created that the database has already (a migration applied twice, or a"
        " schema created outside the migrations)",
    ),
    (
        "sqlite3",
        "OperationalError",
        "database is locked",
        "another connection held a write lock longer than this one waits (a long write"
        " transaction, another process writing, or a connection left open in a transaction)",
    ),
    (
        "sqlite3",
        "OperationalError",
        "unable to open database file",
        "the database file cannot be opened or created: its directory does not exist, or the"
        " process may not write there",
    ),
    (
        "sqlite3",
        "OperationalError",
        "attempt to write a readonly database",
        "the database file, or the directory that holds its journal, is not writable by the"
        " process",
    ),
    (
        "sqlite3",
        "IntegrityError",
        "UNIQUE constraint failed: {}",
        "a row was written with a value that another row of the table already has in a unique"
        " column",
    ),
    (
        "sqlite3",
        "IntegrityError",
        "NOT NULL constraint failed: {}",
        "a row was written without a value for a column that requires one",
    ),
    (
        "sqlite3",
        "IntegrityError",
        "FOREIGN KEY constraint failed",
        "a row refers to a row of another table that does not exist, or a row that others"
        " still refer to was deleted",
    ),
)

DBAPI_ERRORS: Final = frozenset(
    {
        "DatabaseError",
        "OperationalError",
        "IntegrityError",
        "ProgrammingError",
        "InterfaceError",
        "DataError",
        "InternalError",
        "NotSupportedError",
    }
)
"""PEP 249's exception names: whatever package raises one, its message is the driver's."""

_ENTRIES: Final = [InterpreterMessage(*message) for message in _MESSAGES] + [
    InterpreterMessage(error_class, template, meaning, module)
    for module, error_class, template, meaning in _LIBRARY
]

_SUGGESTION: Final = re.compile(r"\.? Did you (?:mean|forget to import)\b[^\n]*\Z")

_SUBCLASSES: Final = {
    **dict.fromkeys(
        (
            "IOError",
            "EnvironmentError",
            "FileNotFoundError",
            "FileExistsError",
            "PermissionError",
            "IsADirectoryError",
            "NotADirectoryError",
            "ConnectionError",
            "ConnectionRefusedError",
            "ConnectionResetError",
            "ConnectionAbortedError",
            "BrokenPipeError",
            "TimeoutError",
            "BlockingIOError",
            "InterruptedError",
            "ProcessLookupError",
            "ChildProcessError",
        ),
        "OSError",
    ),
    "ModuleNotFoundError": "ImportError",
    "UnboundLocalError": "NameError",
    "IndentationError": "SyntaxError",
    "TabError": "SyntaxError",
    "RecursionError": "RuntimeError",
    "SSLError": "OSError",
    "gaierror": "OSError",
}


@dataclass(frozen=True)
class _Table:
    """The messages, found by a word of theirs (a lookup per word of a paste)."""

    words: dict[str, tuple[int, ...]]
    """The entries by their least shared word (see :func:`bounded_words`)."""
    wordless: tuple[int, ...]
    """The entries no word finds: tried on every paste."""
    entries: tuple[tuple[tuple[str, ...], InterpreterMessage], ...]
    empty: dict[str, InterpreterMessage]
    """The messages with no text at all (``StopIteration``), by class."""
    general: dict[str, InterpreterMessage]
    """The messages that are all hole (``KeyError``'s key), by class."""
    classes: frozenset[str]
    """Every class of the messages: a paste of another raises none of them."""


@cache
def _table() -> _Table:
    entries: list[tuple[tuple[str, ...], InterpreterMessage]] = []
    empty: dict[str, InterpreterMessage] = {}
    general: dict[str, InterpreterMessage] = {}
    for entry in _ENTRIES:
        literals = tuple(entry.template.split("{}"))
        if not entry.template:
            empty[entry.error_class] = entry
        elif entry.general:
            general[entry.error_class] = entry
        else:
            entries.append((literals, entry))
    words, wordless = by_words([literals for literals, _ in entries])
    classes = frozenset(entry.error_class for entry in _ENTRIES)
    return _Table(
        {word: tuple(numbers) for word, numbers in words.items()},
        tuple(wordless),
        tuple(entries),
        empty,
        general,
        classes,
    )


def passed_on(carrier: str, message: str) -> InterpreterMessage | None:
    """The operating system's error whose text a class of another package shows, if any.

    ``httpx.ConnectError: [Errno 111] Connection refused``: httpx raises its own class with
    the text of the ``OSError`` it caught (``raise mapped_exc(message) from exc``), and the
    text says what happened.

    Args:
        carrier: The pasted class, as pasted.
        message: The pasted message.
    """
    if not message.lstrip().startswith("[Errno "):
        return None
    found = interpreter_message("OSError", message)
    if found is None or found.module or found.general or found.error_class != "OSError":
        return None
    return replace(found, carrier=carrier)


def interpreter_message(error_class: str | None, message: str) -> InterpreterMessage | None:
    """The interpreter's message a pasted error shows, if it shows one.

    Args:
        error_class: The pasted class without its module (None when the paste has none: the
            message is then compared with every class's).
        message: The pasted message.

    Returns:
        The message, or None when the interpreter does not raise it.
    """
    table = _table()
    classes = (error_class, _SUBCLASSES.get(error_class or "", ""))
    if error_class is not None and not table.classes.intersection(classes):
        return None  # asked of every explain: the cheap answer first
    # The first paragraph (a user's words may follow), without the suggestion Python 3.10+
    # adds to some (". Did you mean: 'food'?").
    text = message.strip()
    if "\n\n" in text:
        text = text.split("\n\n", 1)[0].rstrip()
    if "Did you" in text:
        text = _SUGGESTION.sub("", text).strip()
    if not text:
        return table.empty.get(error_class or "")
    groups = filed_under(table.words, text)
    numbers: Sequence[int]
    if table.wordless:
        numbers = sorted({n for found in groups for n in found}.union(table.wordless))
    elif len(groups) == 1:
        numbers = groups[0]  # in the table's order
    elif groups:
        numbers = sorted({n for found in groups for n in found})
    else:
        numbers = ()  # most messages: none of the table's words
    for number in numbers:
        literals, entry = table.entries[number]
        if (error_class is None or entry.error_class in classes) and match_literals(
            literals, text
        ) is not None:
            return entry
    return table.general.get(error_class or "")
