"""Python extraction: every place a module raises, asserts, logs, warns or exits with a message.

One pass over the module's statements (expressions are only entered where a site can be)
finds the sites; :class:`~errdex.analyze.templates.TemplateBuilder` turns each message
expression into a template. Names are resolved flow-sensitively inside a function (the
assignments that reach the site, one alternative per branch, ``msg +=`` appended), then
against class and module constants.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus

from errdex.analyze.templates import Built, TemplateBuilder, apply_percent, merge_parts
from errdex.errors import ExtractionError
from errdex.extract import blob_digest
from errdex.extract.files import SourceFile
from errdex.models import (
    FileResult,
    Location,
    MessageTemplate,
    ProblemKind,
    RaiseSite,
    Severity,
    SiteKind,
    TemplatePart,
)

MESSAGE_KEYWORDS = ("msg", "message", "detail", "reason", "description", "text", "error")
"""Keyword arguments that carry the message when no positional argument is text."""

_CODE_KEYWORDS = ("error_code", "code", "id", "errno")

_LOG_LEVELS = {
    "critical": Severity.CRITICAL,
    "fatal": Severity.CRITICAL,
    "error": Severity.ERROR,
    "exception": Severity.ERROR,
    "error_once": Severity.ERROR,
    "warning": Severity.WARNING,
    "warn": Severity.WARNING,
    "warning_once": Severity.WARNING,
    "warning_rank0_once": Severity.WARNING,
    "warning_advice": Severity.WARNING,
}
_LEVEL_CLASS = {"fatal": "CRITICAL", "exception": "ERROR", "warn": "WARNING"}


def decode_source(file: SourceFile) -> str:
    """Decode a Python file's bytes as the interpreter would (PEP 263 cookie, BOM, UTF-8).

    Args:
        file: The file, with its bytes.

    Returns:
        The text.

    Raises:
        ExtractionError: The file holds NUL bytes (``binary``) or cannot be decoded
            (``encoding``).
    """
    data = file.data or b""
    if b"\0" in data:
        raise ExtractionError(
            "the file contains NUL bytes (binary?)", path=file.path, kind=ProblemKind.BINARY.value
        )
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        raise ExtractionError(
            f"cannot decode: {exc}", path=file.path, kind=ProblemKind.ENCODING.value, line=line
        ) from exc


def split_lines(text: str) -> list[str]:
    """Split text into lines the way Python's tokenizer counts them (LF, CRLF, CR)."""
    return [line.rstrip("\r\n") for line in io.StringIO(text, newline=None).readlines()]


@dataclass
class _Scope:
    """Where the walker is: class and function, and the message variables reaching here."""

    qualname: str = ""
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    class_constants: dict[str, list[Built]] = field(default_factory=dict)
    variables: dict[str, list[Built]] = field(default_factory=dict)


def _class_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_class_like(name: str) -> bool:
    return name[:1].isupper()


def _receiver_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _receiver_name(node.func)
    return ""


def _int_constant(node: ast.expr | None) -> int | None:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.Attribute):
        # HTTPStatus.NOT_FOUND, status.HTTP_404_NOT_FOUND
        digits = (
            "".join(c for c in node.attr.split("_")[1] if c.isdigit())
            if node.attr.startswith("HTTP_")
            else ""
        )
        if len(digits) == 3:
            return int(digits)
        try:
            return int(HTTPStatus[node.attr])
        except KeyError:
            return None
    return None


def _code_constant(node: ast.expr) -> str | None:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (str, int))
        and not isinstance(node.value, bool)
    ):
        return str(node.value)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "errno"
    ):
        return node.attr
    return None


class _ModuleExtractor:
    """Extracts the sites of one parsed module."""

    def __init__(self, path: str, lines: list[str], window: int) -> None:
        self.path = path
        self.lines = lines
        self.window = window
        self.module_constants: dict[str, list[Built]] = {}
        self.sites: list[RaiseSite] = []
        self._scope = _Scope()
        self.builder = TemplateBuilder(self._resolve)

    # -- name resolution -------------------------------------------------------------------

    def _resolve(self, node: ast.expr) -> Sequence[Built] | None:
        scope = self._scope
        if isinstance(node, ast.Name):
            if node.id in scope.variables:
                return scope.variables[node.id]
            if node.id in self.module_constants:
                return self.module_constants[node.id]
            return None
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
            and node.attr in scope.class_constants
        ):
            return scope.class_constants[node.attr]
        return None

    def _constant_templates(self, value: ast.expr, form: str) -> list[Built] | None:
        if not self.builder.is_string_like(value):
            return None
        built = self.builder.build(value)
        if all(b.form == "opaque" for b in built):
            return None
        return [
            Built(b.parts, form if b.form == "constant" else b.form, b.i18n, b.defined_at)
            for b in built
        ]

    # -- walking ---------------------------------------------------------------------------

    def run(self, module: ast.Module) -> list[RaiseSite]:
        for statement in module.body:
            self._collect_constant(statement, self.module_constants, "constant-ref")
        self._walk(module.body)
        return self.sites

    def _collect_constant(
        self, statement: ast.stmt, table: dict[str, list[Built]], form: str
    ) -> None:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        if isinstance(target, ast.Name) and value is not None:
            built = self._constant_templates(value, form)
            if built:
                table[target.id] = [
                    Built(b.parts, b.form, b.i18n, Location(path=self.path, line=statement.lineno))
                    for b in built
                ]

    def _walk(self, body: Iterable[ast.stmt]) -> None:
        for statement in body:
            kind = type(statement)
            if kind is ast.Raise:
                self._raise(statement)  # type: ignore[arg-type]
            elif kind is ast.Expr:
                value = statement.value  # type: ignore[attr-defined]
                if isinstance(value, ast.Call):
                    self._call(value, statement)
            elif kind is ast.Assert:
                self._assert(statement)  # type: ignore[arg-type]
            elif kind is ast.Assign or kind is ast.AnnAssign or kind is ast.AugAssign:
                self._assignment(statement)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self._function(statement)  # type: ignore[arg-type]
            elif kind is ast.ClassDef:
                self._class(statement)  # type: ignore[arg-type]
            elif kind is ast.If:
                self._branches([statement.body, statement.orelse])  # type: ignore[attr-defined]
            elif kind is ast.Try or kind.__name__ == "TryStar":
                handlers = [h.body for h in statement.handlers]  # type: ignore[attr-defined]
                self._walk(statement.body)  # type: ignore[attr-defined]
                self._branches([*handlers, statement.orelse])  # type: ignore[attr-defined]
                self._walk(statement.finalbody)  # type: ignore[attr-defined]
            elif kind is ast.Match:
                self._branches([case.body for case in statement.cases])  # type: ignore[attr-defined]
            elif kind in (ast.For, ast.AsyncFor, ast.While):
                self._branches([statement.body, statement.orelse])  # type: ignore[attr-defined]
            elif kind in (ast.With, ast.AsyncWith):
                self._walk(statement.body)  # type: ignore[attr-defined]

    def _branches(self, bodies: Sequence[list[ast.stmt]]) -> None:
        """Walk alternative bodies; afterwards a variable may hold what any of them assigned."""
        before = self._scope.variables
        outcomes: list[dict[str, list[Built]]] = []
        for body in bodies:
            self._scope.variables = dict(before)
            self._walk(body)
            outcomes.append(self._scope.variables)
        merged: dict[str, list[Built]] = {}
        names = set(before).union(*outcomes) if outcomes else set(before)
        for name in names:
            values: list[Built] = []
            for outcome in outcomes:
                for built in outcome.get(name, before.get(name, [])):
                    if built not in values:
                        values.append(built)
            if len(outcomes) < 2 and name in before:
                for built in before[name]:
                    if built not in values:
                        values.append(built)
            merged[name] = values[:8]
        self._scope.variables = merged

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self._scope
        qualname = f"{outer.qualname}.{node.name}" if outer.qualname else node.name
        self._scope = _Scope(
            qualname=qualname, function=node, class_constants=outer.class_constants
        )
        try:
            self._walk(node.body)
        finally:
            self._scope = outer

    def _class(self, node: ast.ClassDef) -> None:
        outer = self._scope
        constants: dict[str, list[Built]] = {}
        for statement in node.body:
            self._collect_constant(statement, constants, "constant-ref")
        qualname = f"{outer.qualname}.{node.name}" if outer.qualname else node.name
        self._scope = _Scope(qualname=qualname, class_constants=constants)
        try:
            self._walk(node.body)
        finally:
            self._scope = outer

    def _assignment(self, statement: ast.stmt) -> None:
        if self._scope.function is None:
            return
        variables = self._scope.variables
        if isinstance(statement, ast.AugAssign):
            if (
                isinstance(statement.op, ast.Add)
                and isinstance(statement.target, ast.Name)
                and statement.target.id in variables
            ):
                additions = self.builder.build(statement.value)
                variables[statement.target.id] = [
                    Built(b.parts + a.parts, "variable", b.i18n or a.i18n, b.defined_at)
                    for b in variables[statement.target.id]
                    for a in additions
                ][:8]
            return
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]  # type: ignore[attr-defined]
        value = statement.value  # type: ignore[attr-defined]
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            built = self._constant_templates(value, "variable") if value is not None else None
            if built:
                variables[target.id] = [
                    Built(
                        b.parts, "variable" if b.form != "opaque" else b.form, b.i18n, b.defined_at
                    )
                    for b in built
                ]
            else:
                variables.pop(target.id, None)

    # -- sites -----------------------------------------------------------------------------

    def _message_argument(self, call: ast.Call) -> ast.expr | None:
        for argument in call.args:
            if not isinstance(argument, ast.Starred) and self.builder.is_string_like(argument):
                return argument
        for keyword in call.keywords:
            if keyword.arg in MESSAGE_KEYWORDS:
                return keyword.value
        for argument in call.args:
            if not isinstance(argument, ast.Starred):
                return argument
        return None

    def _raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if exc is None:
            return  # bare re-raise
        if isinstance(exc, ast.Call):
            name = _class_name(exc.func)
            if name is None:
                return
            message = self._message_argument(exc)
            http_status = None
            error_code = None
            for keyword in exc.keywords:
                if keyword.arg == "status_code":
                    http_status = _int_constant(keyword.value)
                elif keyword.arg in _CODE_KEYWORDS and error_code is None:
                    error_code = _code_constant(keyword.value)
            if http_status is None and name.endswith("HTTPException") and exc.args:
                http_status = _int_constant(exc.args[0])
            if error_code is None and exc.args and name.endswith(("OSError", "IOError", "Error")):
                first = exc.args[0]
                if (
                    isinstance(first, ast.Attribute)
                    and isinstance(first.value, ast.Name)
                    and first.value.id == "errno"
                ):
                    error_code = first.attr
            kind = SiteKind.HTTP if http_status is not None else SiteKind.RAISE
            self._emit(
                node,
                kind=kind,
                error_class=name,
                message=message,
                http_status=http_status,
                error_code=error_code,
                chained=node.cause is not None,
            )
            return
        name = _class_name(exc)
        if name is not None and _is_class_like(name):
            self._emit(
                node,
                kind=SiteKind.RAISE,
                error_class=name,
                message=None,
                chained=node.cause is not None,
            )

    def _assert(self, node: ast.Assert) -> None:
        if node.msg is None:
            return
        self._emit(node, kind=SiteKind.ASSERT, error_class="AssertionError", message=node.msg)

    def _call(self, call: ast.Call, statement: ast.stmt) -> None:
        func = call.func
        if not isinstance(func, (ast.Attribute, ast.Name)):
            return
        name = func.attr if isinstance(func, ast.Attribute) else func.id
        receiver = _receiver_name(func.value) if isinstance(func, ast.Attribute) else ""
        if name in _LOG_LEVELS and isinstance(func, ast.Attribute) and "log" in receiver.lower():
            if not call.args:
                return
            message = call.args[0]
            builds = self.builder.build(message)
            extra = call.args[1:]
            builds = [
                Built(
                    apply_percent(b.parts, list(extra) if extra else None),
                    b.form,
                    b.i18n,
                    b.defined_at,
                )
                for b in builds
            ]
            self._emit_builds(
                statement,
                builds,
                message,
                kind=SiteKind.LOG,
                error_class=_LEVEL_CLASS.get(name, name.split("_")[0].upper()),
                severity=_LOG_LEVELS[name],
            )
        elif name == "warn" and (receiver == "warnings" or isinstance(func, ast.Name)):
            if not call.args:
                return
            message = call.args[0]
            category: ast.expr | None = call.args[1] if len(call.args) > 1 else None
            for keyword in call.keywords:
                if keyword.arg == "category":
                    category = keyword.value
            if (
                isinstance(message, ast.Call)
                and (inner := _class_name(message.func))
                and _is_class_like(inner)
            ):
                category = message.func
                message = self._message_argument(message) or message
            error_class = (_class_name(category) if category is not None else None) or "UserWarning"
            self._emit(
                statement,
                kind=SiteKind.WARN,
                error_class=error_class,
                message=message,
                severity=Severity.WARNING,
            )
        elif name == "exit" and receiver == "sys" and call.args:
            if self.builder.is_string_like(call.args[0]):
                self._emit(
                    statement, kind=SiteKind.EXIT, error_class="SystemExit", message=call.args[0]
                )
        elif name == "abort" and call.args:
            status = _int_constant(call.args[0])
            if status is not None and 400 <= status < 600:
                description: ast.expr | None = call.args[1] if len(call.args) > 1 else None
                for keyword in call.keywords:
                    if keyword.arg in ("description", *MESSAGE_KEYWORDS):
                        description = keyword.value
                self._emit(
                    statement,
                    kind=SiteKind.HTTP,
                    error_class="HTTPException",
                    message=description,
                    http_status=status,
                )

    def _emit(
        self,
        node: ast.stmt,
        *,
        kind: SiteKind,
        error_class: str,
        message: ast.expr | None,
        severity: Severity = Severity.ERROR,
        http_status: int | None = None,
        error_code: str | None = None,
        chained: bool = False,
    ) -> None:
        builds = self.builder.build(message) if message is not None else [Built((), "none")]
        self._emit_builds(
            node,
            builds,
            message,
            kind=kind,
            error_class=error_class,
            severity=severity,
            http_status=http_status,
            error_code=error_code,
            chained=chained,
        )

    def _emit_builds(
        self,
        node: ast.stmt,
        builds: Sequence[Built],
        message: ast.expr | None,
        *,
        kind: SiteKind,
        error_class: str,
        severity: Severity,
        http_status: int | None = None,
        error_code: str | None = None,
        chained: bool = False,
    ) -> None:
        line = node.lineno
        end_line = node.end_lineno or line
        start = max(1, line - self.window)
        end = min(len(self.lines), line + self.window)
        window = "\n".join(self.lines[start - 1 : end])
        function = self._scope.function
        seen: set[tuple[TemplatePart, ...]] = set()
        for built in builds:
            parts = merge_parts(built.parts)
            if parts in seen:
                continue
            seen.add(parts)
            self.sites.append(
                RaiseSite(
                    path=self.path,
                    kind=kind,
                    error_class=error_class,
                    template=MessageTemplate(parts=parts),
                    form=built.form,
                    line=line,
                    end_line=end_line,
                    message_line=message.lineno if message is not None else None,
                    message_end_line=message.end_lineno if message is not None else None,
                    function=self._scope.qualname or None if function is not None else None,
                    function_start=function.lineno if function is not None else None,
                    function_end=function.end_lineno if function is not None else None,
                    severity=severity,
                    http_status=http_status,
                    error_code=error_code,
                    defined_at=built.defined_at,
                    i18n=built.i18n,
                    chained=chained,
                    source_code=window,
                    source_code_start=start,
                    source_code_end=max(start, end),
                )
            )


class PythonExtractor:
    """Finds the error sites of Python files.

    Args:
        window: Lines of source kept on each side of a site.
    """

    language = "python"
    suffixes: tuple[str, ...] = (".py",)
    version = "1"

    def __init__(self, *, window: int = 18) -> None:
        self.window = window

    def extract(self, file: SourceFile) -> FileResult:
        """Extract the sites of one file.

        Args:
            file: The file, with its bytes.

        Returns:
            The file's sites, in source order, and its exports.

        Raises:
            ExtractionError: The file cannot be decoded or parsed.
        """
        data = file.data or b""
        text = decode_source(file)
        try:
            module = ast.parse(text, filename=file.path)
        except SyntaxError as exc:
            raise ExtractionError(
                f"syntax error: {exc.msg}",
                path=file.path,
                kind=ProblemKind.SYNTAX.value,
                line=exc.lineno or 0,
            ) from exc
        except (ValueError, RecursionError, MemoryError) as exc:
            raise ExtractionError(
                f"cannot parse: {type(exc).__name__}: {exc}",
                path=file.path,
                kind=ProblemKind.SYNTAX.value,
            ) from exc
        try:
            sites = _ModuleExtractor(file.path, split_lines(text), self.window).run(module)
        except RecursionError as exc:
            raise ExtractionError(
                "the module is nested too deeply to analyse",
                path=file.path,
                kind=ProblemKind.INTERNAL.value,
            ) from exc
        return FileResult(path=file.path, digest=blob_digest(data), sites=tuple(sites))

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Return every site of a source, in file order (cross-file resolution comes here)."""
        return [site for result in results for site in result.sites]
