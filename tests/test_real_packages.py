"""Real code nobody here wrote: pinned wheels of popular packages, mined with the pipeline.

Every expected record below was checked by reading that version's source. The packages are
downloaded once into the test cache (``tests/corpus.py``); a failed download is an error.
``join`` of literals is the one form none of these packages uses (it is covered by
``test_extract_python.py`` and ``test_templates_property.py``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from corpus import unpacked_wheel

from errdex.analyze.templates import format_literal
from errdex.extract.files import open_source
from errdex.match.compile import compile_template
from errdex.models import ErrorRecord, Location, ProblemKind
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.base import SearchQuery
from errdex.store.sqlite import SQLiteStore

pytestmark = [pytest.mark.network, pytest.mark.slow]

PACKAGES = {
    "requests": "2.32.3",
    "click": "8.1.7",
    "flask": "3.0.3",
    "jinja2": "3.1.4",
    "httpx": "0.27.2",
    "django": "5.2.19",
    "djangorestframework": "3.15.2",
    "fastapi": "0.115.0",
    "pydantic": "2.9.2",
}


@pytest.fixture(scope="session")
def roots() -> dict[str, Path]:
    # Session-scoped, so it runs before the per-test environment points the cache elsewhere.
    return {name: unpacked_wheel(name, version) for name, version in PACKAGES.items()}


@pytest.fixture(scope="session")
def mined(roots, tmp_path_factory) -> dict[str, list[ErrorRecord]]:
    db = tmp_path_factory.mktemp("real") / "store.sqlite3"
    records: dict[str, list[ErrorRecord]] = {}
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        for name, root in roots.items():
            report = pipeline.mine(open_source(str(root), repo=f"pypi:{name}"))
            # Only the minified scripts some wheels ship (DRF's ``highlight.pack.js``).
            assert all(p.kind is ProblemKind.GENERATED for p in report.problems), name
            assert all(p.path.endswith(".js") for p in report.problems), name
            found, total = store.search(SearchQuery(repo=f"pypi:{name}", limit=1_000_000))
            assert total == report.records == len(found)
            records[name] = found
    return records


def at(records: list[ErrorRecord], path: str, line: int) -> list[ErrorRecord]:
    return sorted(
        (r for r in records if r.file_path == path and r.line_number == line),
        key=lambda r: r.error_message,
    )


# (package, path, line, kind, class, templates, form, other fields) — one row per form.
EXPECTED = [
    (
        "requests",
        "requests/adapters.py",
        64,
        "raise",
        "InvalidSchema",
        ["Missing dependencies for SOCKS support."],
        "constant",
        {"arguments": 1},
    ),
    (
        "requests",
        "requests/adapters.py",
        328,
        "raise",
        "OSError",
        ["Could not find a suitable TLS CA certificate bundle, invalid path: {cert_loc}"],
        "f-string",
        {"message_line": 329, "message_end_line": 330, "end_line_number": 331},
    ),
    (
        "httpx",
        "httpx/_config.py",
        123,
        "raise",
        "IOError",
        ["Could not find a suitable TLS CA certificate bundle, invalid path: {self.verify}"],
        "format",
        {"message_line": 124, "message_end_line": 125},
    ),
    (
        "django",
        "django/shortcuts.py",
        92,
        "raise",
        "Http404",
        ["No {queryset.model._meta.object_name} matches the given query."],
        "percent",
        {"message_line": 93},
    ),
    (
        "django",
        "django/db/models/sql/query.py",
        1384,
        "raise",
        "NotSupportedError",
        ["{expression.__class__.__name__} is disallowed in the filter clause."],
        "concat",
        {},
    ),
    (
        "requests",
        "requests/models.py",
        1024,
        "raise",
        "HTTPError",
        [
            "{self.status_code} Client Error: {reason} for url: {self.url}",
            "{self.status_code} Server Error: {reason} for url: {self.url}",
        ],
        "variable",
        {"function": "Response.raise_for_status", "arguments": 2},
    ),
    (
        "django",
        "django/middleware/csrf.py",
        333,
        "raise",
        "RejectRequest",
        ["Referer checking failed - {referer.geturl()} does not match any trusted origins."],
        "constant-ref",
        {"defined_at": Location(path="django/middleware/csrf.py", line=31)},
    ),
    (
        # A logging helper's caller: ``log_response("Forbidden (%s): %s", reason, …)``.
        "django",
        "django/middleware/csrf.py",
        211,
        "log",
        "WARNING",
        ["Forbidden ({reason}): {request.path}"],
        "helper",
        {"defined_at": Location(path="django/utils/log.py", line=293)},
    ),
    (
        "pydantic",
        "pydantic/deprecated/config.py",
        23,
        "warn",
        "DeprecationWarning",
        ["Support for class-based `config` is deprecated, use ConfigDict instead."],
        "imported",
        {"defined_at": Location(path="pydantic/_internal/_config.py", line=32)},
    ),
    (
        "djangorestframework",
        "rest_framework/views.py",
        174,
        "http",
        "NotAuthenticated",
        ["Authentication credentials were not provided."],
        "class-default",
        {
            "http_status": 401,
            "i18n": True,
            "arguments": 0,
            "defined_at": Location(path="rest_framework/exceptions.py", line=178),
        },
    ),
    (
        "httpx",
        "httpx/_content.py",
        100,
        "raise",
        "StreamClosed",
        ["Attempted to read or stream content, but the stream has been closed."],
        "class-template",
        {"defined_at": Location(path="httpx/_exceptions.py", line=337)},
    ),
    (
        "click",
        "click/parser.py",
        398,
        "raise",
        "NoSuchOption",
        # What ``str(e)`` shows, and what click prints (``format_message``) with each
        # suggestion its local ``suggest`` may hold.
        [
            "No such option: {opt}",
            "No such option: {opt} (Possible options: {possibility_str})",
            "No such option: {opt} Did you mean {possibility_str}?",
        ],
        "class-template",
        {"i18n": True, "defined_at": Location(path="click/exceptions.py", line=214)},
    ),
    (
        "click",
        "click/core.py",
        2359,
        "raise",
        "MissingParameter",
        # ``raise MissingParameter(ctx=ctx, param=self)``: ``str(e)`` (``__str__``), and what
        # click prints, ``format_message`` without a message, per text of its ``missing``.
        [
            "Missing argument{param_hint}.",
            "Missing option{param_hint}.",
            "Missing parameter: {param_name}",
            "Missing parameter{param_hint}.",
            "Missing {param_type}{param_hint}.",
        ],
        "class-template",
        {"i18n": True},
    ),
    (
        "django",
        "django/contrib/auth/forms.py",
        370,
        "raise",
        "ValidationError",
        [
            "Please enter a correct {self.username_field.verbose_name} and password. "
            "Note that both fields may be case-sensitive."
        ],
        "factory",
        {
            "error_code": "invalid_login",
            "factory": "AuthenticationForm.get_invalid_login_error",
            "defined_at": Location(path="django/contrib/auth/forms.py", line=397),
        },
    ),
    (
        "django",
        "django/contrib/auth/forms.py",
        388,
        "raise",
        "ValidationError",
        ["This account is inactive."],
        "table",
        {
            "error_code": "inactive",
            "i18n": True,
            "defined_at": Location(path="django/contrib/auth/forms.py", line=335),
        },
    ),
    (
        "django",
        "django/contrib/auth/password_validation.py",
        109,
        "raise",
        "ValidationError",
        [
            "This password is too short. It must contain at least {self.min_length} character.",
            "This password is too short. It must contain at least {self.min_length} characters.",
        ],
        "function",
        {"error_code": "password_too_short"},
    ),
    (
        "jinja2",
        "jinja2/runtime.py",
        935,
        "log",
        "WARNING",
        ["Template variable warning: {undef._undefined_message}"],
        "percent",
        {"severity": "warning"},
    ),
    (
        "requests",
        "requests/__init__.py",
        113,
        "warn",
        "RequestsDependencyWarning",
        [
            "urllib3 ({urllib3.__version__}) or chardet ({chardet_version})/charset_normalizer "
            "({charset_normalizer_version}) doesn't match a supported version!"
        ],
        "format",
        {"severity": "warning"},
    ),
    (
        "flask",
        "flask/globals.py",
        28,
        "raise",
        "RuntimeError",
        [
            "Working outside of application context.\n\nThis typically means that you"
            " attempted to use functionality that needed\nthe current application. To solve"
            " this, set up an application context\nwith app.app_context(). See the"
            " documentation for more information."
        ],
        "handed",
        {"message_line": 29},
    ),
    (
        "flask",
        "flask/app.py",
        260,
        "assert",
        "AssertionError",
        ["Invalid static_host/host_matching combination"],
        "constant",
        {"message_line": 262},
    ),
    (
        "fastapi",
        "fastapi/security/http.py",
        89,
        "http",
        "HTTPException",
        ["Not authenticated"],
        "constant",
        {"http_status": 403, "arguments": 2},
    ),
    (
        "jinja2",
        "jinja2/compiler.py",
        856,
        "raise",
        "TemplateAssertionError",
        ["block {block.name} defined twice"],
        "helper",
        {
            "factory": "CodeGenerator.fail",
            "defined_at": Location(path="jinja2/compiler.py", line=382),
        },
    ),
    (
        # The text of a property, raised as the class an ``__init__`` default names.
        "jinja2",
        "jinja2/runtime.py",
        857,
        "raise",
        "UndefinedError",
        [
            "{object_type_repr(self._undefined_obj)} has no attribute {self._undefined_name}",
            "{object_type_repr(self._undefined_obj)} has no element {self._undefined_name}",
            "{self._undefined_hint}",
            "{self._undefined_name} is undefined",
        ],
        "function",
        {"function": "Undefined._fail_with_undefined_error"},
    ),
    (
        # ``ctx.fail(...)`` where ``ctx: Context``: a method found through the annotation.
        "click",
        "click/core.py",
        1668,
        "raise",
        "UsageError",
        ["Missing command."],
        "helper",
        {
            "factory": "Context.fail",
            "i18n": True,
            "defined_at": Location(path="click/core.py", line=684),
        },
    ),
    (
        "django",
        "django/contrib/admin/checks.py",
        86,
        "object",
        "Error",
        [
            "A 'django.template.backends.django.DjangoTemplates' instance must be configured "
            "in TEMPLATES in order to use the admin application."
        ],
        "constant",
        {"error_code": "admin.E403"},
    ),
    (
        "pydantic",
        "pydantic/main.py",
        1114,
        "warn",
        "PydanticDeprecatedSince20",
        # The category's ``__str__`` shows ``self.message``, the message ``rstrip(".")``ed,
        # then ". Deprecated in Pydantic V2.0 …": the text users see in their logs.
        [
            "The `dict` method is deprecated; use `model_dump` instead. Deprecated in Pydantic"
            " V{self.since[0]}.{self.since[1]} to be removed in"
            " V{self.expected_removal[0]}.{self.expected_removal[1]}.",
            "The `dict` method is deprecated; use `model_dump` instead. Deprecated in Pydantic"
            " V{self.since[0]}.{self.since[1]} to be removed in"
            " V{self.expected_removal[0]}.{self.expected_removal[1]}. See Pydantic V2 Migration"
            " Guide at https://errors.pydantic.dev/{version_short()}/migration/",
        ],
        "class-template",
        {},
    ),
    (
        "pydantic",
        "pydantic/config.py",
        1052,
        "raise",
        "PydanticUserError",
        # ``__str__`` shows the message alone without a code, and with the code's page after
        # it (the decorated text is kept next to the bare one).
        [
            "Cannot use `with_config` on {class_.__name__} as it is a Pydantic model",
            "Cannot use `with_config` on {class_.__name__} as it is a Pydantic model\n\n"
            "For further information visit"
            " https://errors.pydantic.dev/{version_short()}/u/with-config-on-model",
        ],
        "class-template",
        {"error_code": "with-config-on-model"},
    ),
]


@pytest.mark.parametrize(
    ("package", "path", "line", "kind", "error_class", "templates", "form", "fields"),
    EXPECTED,
    ids=[f"{row[0]}:{row[6]}:{row[2]}" for row in EXPECTED],
)
def test_known_records(mined, package, path, line, kind, error_class, templates, form, fields):
    records = at(mined[package], path, line)
    assert [r.error_message for r in records] == templates
    for record in records:
        assert (record.kind.value, record.error_class, record.message_form) == (
            kind,
            error_class,
            form,
        )
        for name, value in fields.items():
            got = getattr(record, name)
            assert (got.value if hasattr(got, "value") else got) == value, name
        assert record.source_code_start <= line <= record.source_code_end


def test_most_raise_messages_are_templates(mined):
    """Few messages are opaque (a bare ``{name}``), pass-through of caught exceptions aside."""
    raises = [
        r
        for records in mined.values()
        for r in records
        if r.arguments and r.message_form not in ("passthrough", "helper")
    ]
    opaque = [r for r in raises if r.template.literal_length == 0]
    assert len(raises) > 2000
    assert len(opaque) / len(raises) < 0.10, [r.error_message for r in opaque][:40]


class RaiseCounter(ast.NodeVisitor):
    """Counts ``raise`` statements whose exception is a call with at least one argument."""

    def __init__(self) -> None:
        self.lines: set[int] = set()

    def visit_Raise(self, node: ast.Raise) -> None:
        if isinstance(node.exc, ast.Call) and (node.exc.args or node.exc.keywords):
            self.lines.add(node.lineno)
        self.generic_visit(node)


@pytest.mark.parametrize("package", list(PACKAGES))
def test_raise_sites_with_arguments_equal_an_independent_count(roots, mined, package):
    expected: set[tuple[str, int]] = set()
    source = open_source(str(roots[package]))
    for file in source.files(wanted=(".py",), max_bytes=5_000_000, include_tests=False):
        counter = RaiseCounter()
        counter.visit(ast.parse(file.data or b""))
        expected.update((file.path, line) for line in counter.lines)
    found = {(r.file_path, r.line_number) for r in mined[package] if r.arguments}
    assert found == expected
    assert len(found) > 20


SAMPLES = ["x", "42", "a.b (c)|*", "", "multi\nline", "{braces}", "% ", "ünï"]


def test_real_templates_match_the_messages_they_produce(mined):
    checked = 0
    for records in mined.values():
        for record in records:
            parts = record.template.parts
            if not record.template.holes or not all(
                h.isidentifier() for h in record.template.holes
            ):
                continue
            for offset in range(3):
                values: list[str] = []
                pieces: list[str] = []
                for index, part in enumerate(parts):
                    if not part.hole:
                        pieces.append(part.text)
                        continue
                    value = SAMPLES[(index + offset) % len(SAMPLES)]
                    formatted = format_literal(value, part.style)
                    values.append(value if formatted is None else formatted)
                    pieces.append(values[-1])
                message = "".join(pieces)
                assert compile_template(record.template).match(message) is not None, (
                    record.error_message,
                    message,
                )
                if all(values):
                    assert re.fullmatch(record.message_pattern, message, re.DOTALL), (
                        record.message_pattern,
                        message,
                    )
            checked += 1
    assert checked > 500
