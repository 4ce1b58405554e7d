"""Go extraction: each message form, the printf property, real Debian Go packages, explain.

The property test formats each template's message the way Go's ``fmt`` does, with a Python
implementation of the verbs it uses (see ``go_sprintf``); when ``go`` is on the machine a
batch of samples is also run through the real runtime, in one ``go run``.

The real corpora are Debian's ``golang-*-dev`` packages (Go source under
``usr/share/gocode/src/<import path>``), pinned below; every expected record was checked by
reading that version's source.
"""

from __future__ import annotations

import base64
import decimal
import math
import random
import re
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus import debian_package
from hypothesis import given, settings
from hypothesis import strategies as st
from test_templates_property import TEXT as PYTHON_TEXT

from errdex.analyze.templates import seed_pattern
from errdex.extract.files import SourceFile, open_source
from errdex.extract.go import GoExtractor, go_unescape, printf_parts, status_text
from errdex.match.compile import compile_template
from errdex.match.explain import Explainer
from errdex.models import ErrorRecord, Location, MatchKind, RaiseSite, SiteKind
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.base import SearchQuery
from errdex.store.sqlite import SQLiteStore


def mine(files: dict[str, str]) -> list[RaiseSite]:
    """Extract and link Go files given as text."""
    extractor = GoExtractor()
    results = [
        extractor.extract(SourceFile(p, textwrap.dedent(t).encode())) for p, t in files.items()
    ]
    return extractor.link(results)


def one(source: str, path: str = "x.go") -> RaiseSite:
    sites = mine({path: "package x\n\n" + textwrap.dedent(source)})
    assert len(sites) == 1, [(s.line, s.error_class, s.template.text) for s in sites]
    return sites[0]


def described(site: RaiseSite) -> tuple[str, str, str, str]:
    return (site.kind.value, site.error_class, site.form, site.template.text)


# -- message forms ---------------------------------------------------------------------------


def test_string_escapes_are_decoded_the_go_way():
    site = one(r"""var e = errors.New("tab\there \x41\101\u00e9\U0001F642 \\ \"q\" \xc3\xa9")""")
    assert site.template.text == 'tab\there AAé🙂 \\ "q" é'
    assert go_unescape(r"\x41\z") == "A\\z"
    raw = one('func f() error { return errors.New(`raw \\n "%d"` + "\\n") }')
    assert raw.template.text == 'raw \\n "%d"\n'


def test_a_raw_string_drops_carriage_returns():
    sites = mine({"x.go": "package x\nfunc f() error { return errors.New(`a\r\nb`) }\n"})
    assert sites[0].template.text == "a\nb"


@pytest.mark.parametrize(
    ("call", "text", "styles"),
    [
        ('fmt.Errorf("got %d of %s", n, s)', "got {n} of {s}", ["%d", "%s"]),
        ('fmt.Errorf("%-8s|%08.3f|%+d|%#x|% d", s, f, n, n, n)', "{s}|{f}|{n}|{n}|{n}", None),
        ('fmt.Errorf("100%% done %v", x)', "100% done {x}", ["%v"]),
        ('fmt.Errorf("%[2]d-%[1]s %v", s, n)', "{n}-{s} {n}", ["%d", "%s", "%v"]),
        ('fmt.Errorf("%*d|%.*f", w, n, p, f)', "{n}|{f}", ["%*d", "%.*f"]),
        ('fmt.Errorf("a %d b %s", n)', "a {n} b %!s(MISSING)", ["%d"]),
        ('fmt.Errorf("a %d", n, s)', "a {n}%!(EXTRA {s})", ["%d", "%v"]),
        ('fmt.Errorf("bad %[3]d", n)', "bad %!d(BADINDEX)", []),
        ('fmt.Errorf("ends with %", n)', "ends with %!(NOVERB)%!(EXTRA {n})", ["%v"]),
        ('fmt.Errorf("many %s %d", args...)', "many {args...} {args...}", ["%s", "%d"]),
        ('fmt.Errorf("name %s", "fixed")', "name fixed", []),
    ],
)
def test_printf_verbs_become_holes(call, text, styles):
    site = one(f"func f() error {{ return {call} }}")
    assert (site.error_class, site.template.text) == ("fmt.Errorf", text)
    if styles is not None:
        assert [p.style for p in site.template.parts if p.hole] == styles


def test_wrapping_with_w_is_chained():
    site = one('func f(err error) error { return fmt.Errorf("read config: %w", err) }')
    assert site.chained and site.template.text == "read config: {err}"
    assert printf_parts("%w", [])[1] is False


def test_a_panic_with_each_message_form():
    sites = mine(
        {
            "x.go": """\
            package x

            func f(n int, err error) {
            \tpanic("literal")
            \tpanic(fmt.Sprintf("bad %d", n))
            \tpanic(err)
            \tpanic(errors.New("wrapped " + "twice"))
            \tpanic(fmt.Sprint("count:", n, n, "!"))
            }
            """
        }
    )
    assert [(s.line, s.error_class, s.form, s.template.text) for s in sites] == [
        (4, "panic", "literal", "literal"),
        (5, "panic", "format", "bad {n}"),
        (6, "panic", "opaque", "{err}"),
        (7, "panic", "literal", "wrapped twice"),  # one site: errors.New inside is the panic's
        (8, "panic", "concat", "count:{n}{n}!"),
    ]
    assert all(s.kind is SiteKind.RAISE and s.function == "x.f" for s in sites)


def test_a_message_held_in_a_variable_gives_one_site_per_assignment():
    sites = mine(
        {
            "x.go": """\
            package x

            func f(n int, s string) error {
            \tmsg := "first " + s
            \tif n > 0 {
            \t\tmsg = fmt.Sprintf("second %d", n)
            \t}
            \tmsg += "!"
            \treturn errors.New(msg)
            }

            func g(err error) error {
            \tmsg := err.Error()
            \treturn errors.New(msg)
            }
            """
        }
    )
    assert [(s.line, s.form, s.template.text) for s in sites] == [
        (9, "variable", "first {s}!"),
        (9, "variable", "second {n}!"),
        (14, "opaque", "{msg}"),
    ]
    assert sites[0].message_line == 9


def test_constants_of_the_file_and_of_other_files_of_the_package():
    sites = mine(
        {
            "pkg/a.go": """\
            package pkg

            const local = "local message"
            const tmpl = "bad %q at %d"

            func f(s string, n int) error {
            \tif n > 0 {
            \t\treturn errors.New(local)
            \t}
            \tif n > 1 {
            \t\treturn errors.New(shared)
            \t}
            \treturn fmt.Errorf(tmpl, s, n)
            }
            """,
            "pkg/b.go": 'package pkg\n\nconst shared = "shared " + "message"\n',
            "other/c.go": 'package other\n\nconst shared = "not this one"\n',
        }
    )
    assert [(s.line, s.form, s.template.text, s.defined_at) for s in sites] == [
        (8, "constant", "local message", Location(path="pkg/a.go", line=3)),
        (11, "constant", "shared message", Location(path="pkg/b.go", line=3)),
        (13, "format", "bad {s} at {n}", Location(path="pkg/a.go", line=4)),
    ]


SENTINELS = {
    "store/errors.go": """\
    package store

    import "errors"

    var (
    \tErrNotFound = errors.New("store: not found")
    \terrClosed   = fmt.Errorf("store: closed %s", "pipe")
    )

    const ErrReadOnly = Error("store: read only")

    type Error string

    func (e Error) Error() string { return string(e) }
    """,
    "store/get.go": """\
    package store

    func Get(k string) (string, error) {
    \tif k == "" {
    \t\treturn "", ErrNotFound
    \t}
    \tif k == "x" {
    \t\treturn "", fmt.Errorf("get %q: %w", k, ErrNotFound)
    \t}
    \tif k == "y" {
    \t\treturn "", errClosed
    \t}
    \tif k == "z" {
    \t\treturn "", ErrUnknown
    \t}
    \treturn "", io.EOF
    }
    """,
    "api/api.go": """\
    package api

    func Load() error {
    \treturn store.ErrNotFound
    }
    """,
}


def test_sentinels_their_returns_and_their_wraps_across_files_and_packages():
    sites = {(s.path, s.line): s for s in mine(SENTINELS)}
    declared = sites["store/errors.go", 6]
    assert described(declared) == ("raise", "ErrNotFound", "literal", "store: not found")
    assert sites["store/errors.go", 7].template.text == "store: closed pipe"
    assert described(sites["store/errors.go", 10]) == (
        "raise",
        "ErrReadOnly",
        "literal",
        "store: read only",
    )
    returned = sites["store/get.go", 5]
    assert described(returned) == ("raise", "ErrNotFound", "sentinel", "store: not found")
    assert returned.defined_at == Location(path="store/errors.go", line=6)
    assert returned.function == "store.Get"
    wrapped = sites["store/get.go", 8]
    assert described(wrapped) == ("raise", "fmt.Errorf", "format", "get {k}: store: not found")
    assert wrapped.chained
    assert sites["store/get.go", 11].template.text == "store: closed pipe"
    assert ("store/get.go", 14) not in sites  # ErrUnknown is no sentinel of the source
    assert ("store/get.go", 16) not in sites  # io.EOF is not a site
    assert described(sites["api/api.go", 4]) == (
        "raise",
        "ErrNotFound",
        "sentinel",
        "store: not found",
    )


def test_an_error_type_and_its_constructions():
    sites = mine(
        {
            "x/types.go": """\
            package x

            type OpError struct {
            \tOp   string
            \tPath string
            \tErr  error
            }

            func (e *OpError) Error() string {
            \treturn e.Op + " " + e.Path + ": " + e.Err.Error()
            }

            type Config struct{ Name string }
            """,
            "x/use.go": """\
            package x

            var ErrGone = errors.New("gone")

            func open(name string) (*Config, error) {
            \tif name == "" {
            \t\treturn nil, &OpError{Op: "open", Path: name, Err: ErrGone}
            \t}
            \tif name == "-" {
            \t\treturn nil, OpError{"stat", name, err}
            \t}
            \treturn &Config{Name: name}, nil
            }
            """,
        }
    )
    by_line = {(s.path, s.line): s for s in sites}
    method = by_line["x/types.go", 10]
    assert described(method) == ("raise", "OpError", "concat", "{e.Op} {e.Path}: {e.Err.Error()}")
    assert method.function == "x.(*OpError).Error"
    keyed = by_line["x/use.go", 7]
    assert described(keyed) == ("raise", "OpError", "construct", "open {name}: gone")
    positional = by_line["x/use.go", 10]
    assert positional.template.text == "stat {name}: {err.Error()}"
    assert ("x/use.go", 12) not in by_line  # Config has no Error method


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            'log.Fatal("cannot start: ", err)',
            ("exit", "log.Fatal", "concat", "cannot start: {err}"),
        ),
        (
            'log.Fatalf("cannot %s: %v", what, err)',
            ("exit", "log.Fatal", "format", "cannot {what}: {err}"),
        ),
        (
            'log.Fatalln("cannot start:", err)',
            ("exit", "log.Fatal", "concat", "cannot start: {err}"),
        ),
        ('log.Panicf("bad state %d", n)', ("raise", "log.Panic", "format", "bad state {n}")),
        (
            'log.Printf("failed to dial %s", addr)',
            ("log", "log.Print", "format", "failed to dial {addr}"),
        ),
        (
            'log.Printf("warning: slow %s", addr)',
            ("log", "log.Print", "format", "warning: slow {addr}"),
        ),
        ('log.Println("retry:", err)', ("log", "log.Print", "concat", "retry: {err}")),
        (
            'logger.Error("query failed", zap.Error(err), zap.String("q", q))',
            ("log", "ERROR", "literal", "query failed"),
        ),
        ('slog.Error("db down", "attempt", n, "err", err)', ("log", "ERROR", "literal", "db down")),
        ('s.log.Warnf("slow query: %s", q)', ("log", "WARNING", "format", "slow query: {q}")),
        (
            'klog.ErrorS(err, "sync failed", "pod", name)',
            ("log", "ERROR", "literal", "sync failed"),
        ),
        (
            'logger.ErrorContext(ctx, "request failed")',
            ("log", "ERROR", "literal", "request failed"),
        ),
        (
            'log.Errorf("reading %s: %v", path, err)',
            ("log", "ERROR", "format", "reading {path}: {err}"),
        ),
        ('log.Error("reading ", path)', ("log", "ERROR", "concat", "reading {path}")),
        ('zap.L().Fatal("no config")', ("exit", "CRITICAL", "literal", "no config")),
        (
            'c.Logger().Warn("response already committed")',
            ("log", "WARNING", "literal", "response already committed"),
        ),
        (
            'logger.Panicw("broken invariant", "n", n)',
            ("raise", "panic", "literal", "broken invariant"),
        ),
    ],
)
def test_log_sites(call, expected):
    site = one(f"func f() {{\n\t{call}\n}}")
    assert described(site) == expected


@pytest.mark.parametrize(
    "call",
    [
        'log.Printf("listening on %s", addr)',
        'log.Println("started")',
        'logger.Info("started")',
        "zap.Error(err)",
        'catalog.Error("not a logger")',
        'fmt.Println("failed")',
        "logger.Fatal(args...)",
        "logger.Errorf(format, args...)",
    ],
)
def test_calls_that_are_no_sites(call):
    assert mine({"x.go": f"package x\n\nfunc f() {{\n\t{call}\n}}\n"}) == []


def test_grpc_status_errors_carry_the_code_name():
    sites = mine(
        {
            "x.go": """\
            package x

            func f(id int, code codes.Code, msg string) error {
            \tif id < 0 {
            \t\treturn status.Errorf(codes.NotFound, "user %d not found", id)
            \t}
            \tif id == 0 {
            \t\treturn status.Error(codes.InvalidArgument, msg)
            \t}
            \treturn status.Error(code, "dynamic")
            }
            """
        }
    )
    assert [(s.error_class, s.template.text, s.error_code) for s in sites] == [
        ("status.Errorf", "rpc error: code = NotFound desc = user {id} not found", "NotFound"),
        ("status.Error", "rpc error: code = InvalidArgument desc = {msg}", "InvalidArgument"),
        ("status.Error", "rpc error: code = {code} desc = dynamic", None),
    ]


def test_http_errors_carry_the_status():
    sites = mine(
        {
            "x.go": """\
            package x

            func h(w http.ResponseWriter, c echo.Context, name string) error {
            \thttp.Error(w, "no such user: "+name, http.StatusNotFound)
            \thttp.Error(w, "busy", 503)
            \tc.String(http.StatusBadRequest, "bad name %q", name)
            \tc.JSON(http.StatusBadRequest, map[string]string{"error": "bad"})
            \tw.WriteHeader(http.StatusTeapot)
            \tc.String(http.StatusOK, "fine")
            \treturn echo.NewHTTPError(http.StatusUnauthorized)
            }
            """
        }
    )
    assert [
        (s.line, s.kind.value, s.error_class, s.template.text, s.http_status) for s in sites
    ] == [
        (4, "http", "http.Error", "no such user: {name}", 404),
        (5, "http", "http.Error", "busy", 503),
        (6, "http", "c.String", "bad name {name}", 400),
        (10, "http", "echo.NewHTTPError", "Unauthorized", 401),
    ]
    assert (
        status_text(413) == "Request Entity Too Large"
        and status_text(500) == "Internal Server Error"
    )


def test_stderr_prints_before_os_exit_are_exit_sites():
    sites = mine(
        {
            "main.go": """\
            package main

            func main() {
            \tif err := run(); err != nil {
            \t\tfmt.Fprintf(os.Stderr, "error: %v\\n", err)
            \t\tos.Exit(1)
            \t}
            \tfmt.Fprintln(os.Stderr, "could not flush:", err)
            \tfmt.Fprintln(os.Stderr, "usage: app [flags]")
            }
            """
        }
    )
    assert [(s.line, s.kind.value, s.error_class, s.template.text) for s in sites] == [
        (5, "exit", "os.Exit", "error: {err}"),
        (8, "log", "os.Stderr", "could not flush: {err}"),
    ]


def test_pkg_errors_wraps():
    sites = mine(
        {
            "x.go": """\
            package x

            func f(err error, path string) error {
            \tif path == "" {
            \t\treturn errors.Wrap(err, "open config")
            \t}
            \treturn pkgerrors.Wrapf(err, "read %s", path)
            }
            """
        }
    )
    assert [(s.error_class, s.template.text, s.chained) for s in sites] == [
        ("errors.Wrap", "open config: {err}", True),
        ("pkgerrors.Wrapf", "read {path}: {err}", True),
    ]


def test_test_files_have_assert_sites():
    site = one('func TestX(t *testing.T) {\n\tt.Fatalf("got %d, want 3", n)\n}', path="x_test.go")
    assert (site.kind, site.error_class, site.template.text) == (
        SiteKind.ASSERT,
        "t.Fatalf",
        "got {n}, want 3",
    )
    assert mine({"x.go": 'package x\nfunc f(t *T) { t.Fatalf("no") }\n'}) == []


def test_functions_are_named_as_go_stack_traces_name_them():
    sites = mine(
        {
            "x.go": """\
            package store

            func plain() { panic("a") }
            func (s *Store) pointer() { panic("b") }
            func (s Store) value() { panic("c") }
            func (l *List[T]) generic() { panic("d") }
            func outer() { go func() { panic("e") }() }
            var global = func() { panic("f") }
            """
        }
    )
    assert [s.function for s in sites] == [
        "store.plain",
        "store.(*Store).pointer",
        "store.Store.value",
        "store.(*List[...]).generic",
        "store.outer",
        None,
    ]
    assert sites[0].function_start == 3 and sites[0].function_end == 3


def test_a_file_with_syntax_errors_still_gives_its_valid_sites():
    sites = mine(
        {
            "x.go": """\
            package x

            func broken( {
            \treturn ((((
            }

            func ok() error {
            \treturn errors.New("still found")
            }
            """
        }
    )
    assert [s.template.text for s in sites] == ["still found"]


def test_a_file_that_is_not_go_is_a_problem(tmp_path):
    from errdex.errors import ExtractionError

    with pytest.raises(ExtractionError):
        GoExtractor().extract(SourceFile("x.go", b"\x00\x01binary"))
    db = tmp_path / "s.sqlite3"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.go").write_bytes(b"\xff\xfe not utf-8")
    (tmp_path / "src" / "good.go").write_text('package x\nvar ErrX = errors.New("x")\n')
    with SQLiteStore(db) as store:
        report = Pipeline(Settings(db=db), store).mine(open_source(str(tmp_path / "src")))
    assert [p.path for p in report.problems] == ["bad.go"]
    assert report.records == 1 and report.languages == {"go": 1}


# -- the property: format with Go's fmt, match -----------------------------------------------

_QUOTE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """``strconv.Quote``: a Go interpreted string literal of the text."""
    out = []
    for char in text:
        code = ord(char)
        if char in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


@dataclass(frozen=True)
class GoError:
    """An ``error`` value: ``%v``/``%s``/``%w`` print its message."""

    message: str


@dataclass(frozen=True)
class Pointer:
    """A pointer: ``%p`` prints its address."""

    address: int


def go_type(value: object) -> str:
    return {
        str: "string",
        int: "int",
        float: "float64",
        bool: "bool",
        GoError: "*errors.errorString",
        Pointer: "*int",
    }[type(value)]


def go_shortest(number: float) -> str:
    """``%v``/``%g`` of a float64: the shortest digits, ``%e`` form below 1e-4 and from 1e6."""
    if number == 0:
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    sign = "-" if number < 0 else ""
    parsed = decimal.Decimal(repr(abs(number))).as_tuple()
    assert isinstance(parsed.exponent, int)
    digits = "".join(map(str, parsed.digits))
    point = len(digits) + parsed.exponent
    digits = digits.rstrip("0") or "0"
    exponent = point - 1
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_verb(flags: str, width: int | None, precision: int | None, verb: str, value: object) -> str:
    """Format one value for one verb, as ``fmt.(*pp).printArg`` does for the tested verbs."""
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if verb == "T":
        text = go_type(value)
    elif isinstance(value, GoError) and verb in "vsw":
        text = value.message
    elif isinstance(value, bool) and verb in "vt":
        text = "true" if value else "false"
    elif isinstance(value, Pointer) and verb in "vp":
        text = f"0x{value.address:x}"
    elif isinstance(value, str) and verb in "vsqxX":
        shown = value if precision is None else value[:precision]
        if verb == "q" or (verb == "v" and "#" in flags):
            text = go_quote(shown)
        elif verb in "xX":
            text = shown.encode().hex()
            text = text.upper() if verb == "X" else text
        else:
            text = shown
    elif isinstance(value, int) and not isinstance(value, bool) and verb in "vdxXobcU":
        if verb == "c":
            text = chr(value)
        elif verb == "U":
            text = f"U+{value:04X}"
        else:
            spec = {"v": "d", "d": "d", "x": "x", "X": "X", "o": "o", "b": "b"}[verb]
            text = format(value, ("#" if "#" in flags and verb in "xX" else "") + spec)
            if verb == "X" and "#" in flags:
                text = text.replace("0X", "0X")
    elif isinstance(value, float) and verb in "vfge":
        if verb in "vg" and precision is None:
            text = go_shortest(value)
        else:
            text = f"%.{6 if precision is None else precision}{verb}" % value
    else:
        text = f"%!{verb}({go_type(value)}={value})"
        numeric = False
    if numeric and verb not in "cUT":
        if "+" in flags and not text.startswith("-"):
            text = "+" + text
        elif " " in flags and not text.startswith("-"):
            text = " " + text
    if width is not None and len(text) < width:
        if "-" in flags:
            text = text.ljust(width)
        elif "0" in flags and numeric and verb not in "cUT":
            sign = text[0] if text[:1] in "+- " else ""
            text = sign + text[len(sign) :].rjust(width - len(sign), "0")
        else:
            text = text.rjust(width)
    return text


def go_sprintf(format_: str, *args: object) -> str:  # noqa: C901 - doPrintf
    """Go's ``fmt.Sprintf`` for the verbs, flags, widths and indexes the cases use."""
    out: list[str] = []
    argument, reordered, i, end = 0, False, 0, len(format_)

    def index(at: int) -> tuple[int, bool, bool]:
        nonlocal argument, reordered
        match = re.match(r"\[(\d+)\]", format_[at:])
        if format_[at : at + 1] != "[":
            return at, False, True
        reordered = True
        if match is None or not 1 <= int(match[1]) <= len(args):
            close = format_.find("]", at)
            return (close + 1 if close >= 0 else at + 1), False, False
        argument = int(match[1]) - 1
        return at + match.end(), True, True

    while i < end:
        percent = format_.find("%", i)
        if percent < 0:
            out.append(format_[i:])
            break
        out.append(format_[i:percent])
        i = percent + 1
        flags = ""
        while i < end and format_[i] in "#0+- ":
            flags += format_[i]
            i += 1
        i, after, good = index(i)
        width = precision = None
        if format_[i : i + 1] == "*":
            i += 1
            width = args[argument] if argument < len(args) else None
            argument += 1
        else:
            match = re.match(r"\d+", format_[i:])
            if match:
                width, i = int(match[0]), i + match.end()
                good = good and not after
        if format_[i : i + 1] == ".":
            i += 1
            i, after, good2 = index(i)
            good = good and good2
            if format_[i : i + 1] == "*":
                i += 1
                precision = args[argument] if argument < len(args) else None
                argument += 1
            else:
                match = re.match(r"\d*", format_[i:])
                precision, i = int(match[0] or 0), i + match.end()
        if not after:
            i, after, good2 = index(i)
            good = good and good2
        if i >= end:
            out.append("%!(NOVERB)")
            break
        verb = format_[i]
        i += 1
        if verb == "%":
            out.append("%")
        elif not good:
            out.append(f"%!{verb}(BADINDEX)")
        elif argument >= len(args):
            out.append(f"%!{verb}(MISSING)")
        else:
            out.append(go_verb(flags, width, precision, verb, args[argument]))
            argument += 1
    if not reordered and argument < len(args):
        extras = ", ".join(
            f"{go_type(a)}={go_verb('', None, None, 'v', a)}" for a in args[argument:]
        )
        out.append(f"%!(EXTRA {extras})")
    return "".join(out)


def go_sprint(*operands: object) -> str:
    """``fmt.Sprint``: a space between operands when neither is a string."""
    out = []
    for position, operand in enumerate(operands):
        if (
            position
            and not isinstance(operand, str)
            and not isinstance(operands[position - 1], str)
        ):
            out.append(" ")
        out.append(go_verb("", None, None, "v", operand))
    return "".join(out)


def go_sprintln(*operands: object) -> str:
    return " ".join(go_verb("", None, None, "v", o) for o in operands) + "\n"


GO_TYPES = {
    "s": "string",
    "i": "int",
    "f": "float64",
    "t": "bool",
    "e": "error",
    "r": "rune",
    "p": "*int",
    "w": "int",
}


@dataclass(frozen=True)
class Case:
    """A Go function whose one site is checked: parameters (name → kind), body, what it prints."""

    params: dict[str, str]
    body: str
    run: Callable[[dict[str, object]], str]
    runtime: bool = True  # the real-runtime check can build it (no third-party package)


def _printf_case(call: str, format_: str, args: str, params: dict[str, str], **kw) -> Case:
    names = [a.strip() for a in args.split(",")] if args else []
    return Case(
        params,
        f"return {call}({go_quote(format_)}{''.join(', ' + n for n in names)})",
        lambda v: go_sprintf(format_, *(v[n] for n in names)),
        **kw,
    )


CASES: dict[str, Case] = {
    "strings": _printf_case(
        "fmt.Errorf",
        "s=%s v=%v +v=%+v #v=%#v q=%q x=%x X=%X T=%T .",
        "a, a, a, a, a, a, a, a",
        {"a": "s"},
    ),
    "integers": _printf_case(
        "fmt.Errorf",
        "d=%d v=%v x=%x X=%X o=%o b=%b c=%c U=%U T=%T",
        "n, n, n, n, n, n, r, r, n",
        {"n": "i", "r": "r"},
    ),
    "floats": _printf_case(
        "fmt.Errorf", "f=%f .2f=%.2f g=%g e=%e v=%v T=%T", "x, x, x, x, x, x", {"x": "f"}
    ),
    "other-verbs": _printf_case(
        "fmt.Errorf", "t=%t p=%p: %w (100%% done)", "b, p, e", {"b": "t", "p": "p", "e": "e"}
    ),
    "flags-and-widths": _printf_case(
        "fmt.Errorf",
        "[%-8s|%8s|%08.3f|%+d|% d|%#x|%5.1q|%*d|%-6t]",
        "a, a, x, n, n, n, a, w, n, b",
        {"a": "s", "x": "f", "n": "i", "w": "w", "b": "t"},
    ),
    "explicit-indexes": _printf_case(
        "fmt.Errorf", "%[2]d-%[1]s %v %[1]q", "a, n", {"a": "s", "n": "i"}
    ),
    "missing": _printf_case("fmt.Errorf", "a %d b %s", "n", {"n": "i"}),
    "extra": _printf_case("fmt.Errorf", "a %d", "n, a", {"n": "i", "a": "s"}),
    "escapes": Case(
        {"n": "i"},
        r'return fmt.Errorf("tab\there \x41\101\u00e9\U0001F642 \\ \"q\" %d\n", n)',
        lambda v: go_sprintf('tab\there AAé🙂 \\ "q" %d\n', v["n"]),
    ),
    "raw-string": Case(
        {"a": "s"},
        'return fmt.Errorf(`raw \\n "%s"\r`, a)',
        lambda v: go_sprintf('raw \\n "%s"', v["a"]),
    ),
    "concat": Case(
        {"a": "s", "b": "s"},
        'return errors.New("start " + a + " mid\\t" + b + " end")',
        lambda v: f"start {v['a']} mid\t{v['b']} end",
    ),
    "sprint": Case(
        {"n": "i", "m": "i", "a": "s"},
        'return errors.New(fmt.Sprint("count:", n, m, "name=", a))',
        lambda v: go_sprint("count:", v["n"], v["m"], "name=", v["a"]),
    ),
    "sprintln": Case(
        {"a": "s", "n": "i"},
        'return errors.New(fmt.Sprintln("got", a, n))',
        lambda v: go_sprintln("got", v["a"], v["n"]),
    ),
    "variable-branches": Case(
        {"a": "s", "n": "i"},
        'msg := "first " + a\n\tif n > 0 {\n\t\tmsg = fmt.Sprintf("second %d", n)\n\t}\n'
        '\tmsg += "!"\n\treturn errors.New(msg)',
        lambda v: (go_sprintf("second %d", v["n"]) if v["n"] > 0 else f"first {v['a']}") + "!",
    ),
    "constant-format": Case(
        {"a": "s", "n": "i"},
        "return fmt.Errorf(tmpl, a, n)",
        lambda v: go_sprintf("bad %q at %d", v["a"], v["n"]),
    ),
    "wrapped-sentinel": Case(
        {"a": "s"},
        'return fmt.Errorf("op %s: %w", a, errBase)',
        lambda v: go_sprintf("op %s: %w", v["a"], GoError("base failure")),
    ),
    "error-type": Case(
        {"a": "s", "n": "i"},
        "return &opError{Op: a, N: n}",
        lambda v: go_sprintf("op %s failed after %d tries", v["a"], v["n"]),
    ),
    "panic": Case(
        {"n": "i", "m": "i"},
        'panic(fmt.Sprintf("index %d out of %d", n, m))',
        lambda v: go_sprintf("index %d out of %d", v["n"], v["m"]),
    ),
    "log-printf": Case(
        {"a": "s", "e": "e"},
        'log.Printf("failed to open %s: %v", a, e)\n\treturn nil',
        lambda v: go_sprintf("failed to open %s: %v", v["a"], v["e"]),
    ),
    "grpc": Case(
        {"n": "i", "a": "s"},
        'return status.Errorf(codes.NotFound, "user %d not found: %v", n, a)',
        lambda v: (
            "rpc error: code = NotFound desc = "
            + go_sprintf("user %d not found: %v", v["n"], v["a"])
        ),
        runtime=False,
    ),
    "pkg-errors": Case(
        {"a": "s"},
        'return errors.Wrapf(errBase, "read %s", a)',
        lambda v: go_sprintf("read %s", v["a"]) + ": base failure",
        runtime=False,
    ),
}

HEADER = """\
package main

import (
\t"errors"
\t"fmt"
\t"log"
)

var errBase = errors.New("base failure")

const tmpl = "bad %q at %d"

type opError struct {
\tOp string
\tN  int
}

func (e *opError) Error() string { return fmt.Sprintf("op %s failed after %d tries", e.Op, e.N) }
"""


def _case_name(index: int) -> str:
    return f"case{index}"


def _source(*, runtime: bool = False) -> tuple[str, dict[str, tuple[int, int]]]:
    """The cases as one Go file (``runtime``: only those the real-runtime check can build)."""
    lines = HEADER.splitlines()
    spans: dict[str, tuple[int, int]] = {}
    for index, (name, case) in enumerate(CASES.items()):
        if runtime and not case.runtime:
            continue
        params = ", ".join(f"{p} {GO_TYPES[k]}" for p, k in case.params.items())
        lines.append("")
        lines.append(f"func {_case_name(index)}({params}) error {{")
        first = len(lines) + 1
        lines.extend(
            "\t" + line.lstrip("\t") if i == 0 else line
            for i, line in enumerate(case.body.split("\n"))
        )
        spans[name] = (first, len(lines))
        lines.append("}")
    return "\n".join(lines) + "\n", spans


SOURCE, SPANS = _source()

# The Python property's hostile text, and what Go's fmt itself prints for bad verbs.
TEXT = st.one_of(PYTHON_TEXT, st.sampled_from(["%!", "%!d(MISSING)", "%!(EXTRA ", "%w", "%[1]d"]))
KINDS = {
    "s": TEXT,
    "i": st.integers(min_value=-(10**9), max_value=10**9),
    "f": st.floats(allow_nan=False, allow_infinity=False),
    "t": st.booleans(),
    "e": TEXT.map(GoError),
    "r": st.integers(min_value=0x20, max_value=0x10FFFF).filter(
        lambda c: not 0xD800 <= c <= 0xDFFF
    ),
    "p": st.integers(min_value=0xC000000000, max_value=0xC0FFFFFFFF).map(Pointer),
    "w": st.integers(min_value=0, max_value=20),
}


@pytest.fixture(scope="module")
def case_sites() -> dict[str, list[RaiseSite]]:
    sites = mine({"cases.go": SOURCE})
    return {
        name: [s for s in sites if first <= s.line <= last] for name, (first, last) in SPANS.items()
    }


def test_every_case_is_one_template_with_holes(case_sites):
    for name, sites in case_sites.items():
        expected = 2 if name == "variable-branches" else 1
        assert len(sites) == expected, (name, [s.template.text for s in sites])
        assert all(s.template.holes and not s.template.is_opaque for s in sites), name
    assert "base failure" in case_sites["wrapped-sentinel"][0].template.text
    assert case_sites["error-type"][0].form == "construct"


def _matches(sites: list[RaiseSite], message: str, values: dict[str, object]) -> None:
    matched = [s for s in sites if compile_template(s.template).match(message) is not None]
    assert matched, (message, [s.template.text for s in sites])
    if all(v != "" and v != GoError("") for v in values.values()):
        assert any(re.fullmatch(seed_pattern(s.template), message, re.DOTALL) for s in matched), (
            message,
            [seed_pattern(s.template) for s in matched],
        )


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_the_printed_message_matches_the_template_and_the_pattern(case_sites, name, data):
    case = CASES[name]
    values = {p: data.draw(KINDS[k], label=p) for p, k in case.params.items()}
    _matches(case_sites[name], case.run(values), values)


def test_the_python_formatting_is_gos_on_known_outputs():
    assert go_sprintf("%v|%v|%v|%v", 1e6, 123456.0, 1e21, 1.5e-7) == "1e+06|123456|1e+21|1.5e-07"
    assert go_sprintf("%5.1q|%-4d|%+d|%x|%#x|%08.3f", "héllo", 7, 3, "hi", 255, -3.14159) == (
        '  "h"|7   |+3|6869|0xff|-003.142'
    )
    assert go_sprintf("%[2]d %[1]s %v %d", "a", 2) == "2 a 2 %!d(MISSING)"
    assert go_sprintf("%d", 1, "x") == "1%!(EXTRA string=x)"
    assert go_sprint("a", 1, 2, "b", 3) == "a1 2b3"


def _go_literal(kind: str, value: object) -> str:
    if kind == "s":
        return go_quote(str(value))
    if kind == "e":
        assert isinstance(value, GoError)
        return f"errors.New({go_quote(value.message)})"
    if kind == "p":
        return "new(int)"
    if kind == "f":
        return f"float64({value!r})"
    if kind == "t":
        return "true" if value else "false"
    return str(value)


def test_the_real_go_runtime_prints_what_the_templates_match(case_sites, tmp_path):
    """One ``go run`` formats a batch of samples of every case; each must match its template."""
    if shutil.which("go") is None:
        pytest.skip(
            "the Go toolchain is not installed (`go` is not on PATH); the printf property above "
            "checks the same templates against a Python implementation of Go's fmt verbs"
        )
    pool = ["", "plain", "%s %d", "a\nb", 'quo"te', "é🙂", "{}", "\\", "(.+?)"]
    generator = random.Random(7)
    samples: list[tuple[str, dict[str, object]]] = []
    simple = {
        "s": lambda: generator.choice(pool),
        "i": lambda: generator.randint(-(10**6), 10**6),
        "f": lambda: generator.choice([0.0, -1.5, 1e6, 3.14159, 1e-7, 123456.0]),
        "t": lambda: generator.random() < 0.5,
        "e": lambda: GoError(generator.choice(pool)),
        "r": lambda: generator.choice([0x41, 0xE9, 0x1F642]),
        "p": lambda: Pointer(0),
        "w": lambda: generator.randint(0, 12),
    }
    calls = []
    for index, (name, case) in enumerate(CASES.items()):
        if not case.runtime:
            continue
        for _ in range(8):
            values = {p: simple[k]() for p, k in case.params.items()}
            samples.append((name, values))
            arguments = ", ".join(_go_literal(case.params[p], v) for p, v in values.items())
            calls.append(f"\tshow(func() error {{ return {_case_name(index)}({arguments}) }})")
    main = textwrap.dedent(
        """\

        func show(call func() error) {
        \tvar logged bytes.Buffer
        \tlog.SetFlags(0)
        \tlog.SetOutput(&logged)
        \tmessage := func() (text string) {
        \t\tdefer func() {
        \t\t\tif r := recover(); r != nil {
        \t\t\t\ttext = fmt.Sprint(r)
        \t\t\t}
        \t\t}()
        \t\tif err := call(); err != nil {
        \t\t\treturn err.Error()
        \t\t}
        \t\treturn strings.TrimSuffix(logged.String(), "\\n")
        \t}()
        \tfmt.Println(base64.StdEncoding.EncodeToString([]byte(message)))
        }

        func main() {
        """
    )
    program = _source(runtime=True)[0].replace(
        'import (\n\t"errors"', 'import (\n\t"bytes"\n\t"encoding/base64"\n\t"strings"\n\t"errors"'
    )
    program += main + "\n".join(calls) + "\n}\n"
    (tmp_path / "go.mod").write_text("module cases\n\ngo 1.19\n")
    (tmp_path / "main.go").write_text(program)
    result = subprocess.run(
        ["go", "run", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    outputs = [base64.b64decode(line).decode() for line in result.stdout.split()]
    assert len(outputs) == len(samples)
    for (name, values), message in zip(samples, outputs, strict=True):
        _matches(case_sites[name], message, values)


# -- real code: Debian's Go packages ---------------------------------------------------------

PACKAGES = {
    # name: (Debian package, version, import path mined)
    "cobra": ("golang-github-spf13-cobra-dev", "1.6.1-1", "github.com/spf13/cobra"),
    "mux": ("golang-github-gorilla-mux-dev", "1.8.0-1", "github.com/gorilla/mux"),
    "echo": ("golang-github-labstack-echo-dev", "4.2.1-3", "github.com/labstack/echo"),
    "grpc": ("golang-google-grpc-dev", "1.33.3-2", "google.golang.org/grpc"),
}


@pytest.fixture(scope="session")
def go_roots() -> dict[str, Path]:
    # Session-scoped, so it runs before the per-test environment points the cache elsewhere.
    return {
        name: debian_package(package, version) / "usr/share/gocode/src" / path
        for name, (package, version, path) in PACKAGES.items()
    }


@pytest.fixture(scope="session")
def go_store(go_roots, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("go") / "store.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        for name, root in go_roots.items():
            report = pipeline.mine(open_source(str(root), repo=f"debian:{name}"))
            assert report.problems == [], name
            assert set(report.languages) == {"go"}, name
    return db


@pytest.fixture(scope="session")
def go_records(go_store) -> dict[str, list[ErrorRecord]]:
    with SQLiteStore(go_store) as store:
        return {
            name: store.search(SearchQuery(repo=f"debian:{name}", limit=100_000))[0]
            for name in PACKAGES
        }


# (package, path, line, kind, class, template, form, other fields)
EXPECTED = [
    ("cobra", "args.go", 77, "raise", "fmt.Errorf",
     "requires at least {n} arg(s), only received {len(args)}", "format",
     {"function": "cobra.MinimumNArgs"}),
    ("cobra", "command.go", 1094, "raise", "fmt.Errorf",
     'required flag(s) "{strings.Join(missingFlagNames, `", "`)}" not set', "format",
     {"function": "cobra.(*Command).ValidateRequiredFlags"}),
    ("cobra", "command.go", 1105, "raise", "panic",
     "group id '{sub.GroupID}' is not defined for subcommand '{sub.CommandPath()}'", "format",
     {"function": "cobra.(*Command).checkCommandGroups", "severity": "critical"}),
    ("cobra", "command.go", 825, "raise", "fmt.Errorf",
     "Called Execute() on a nil Command", "literal", {}),
    ("cobra", "cobra.go", 230, "exit", "os.Exit", "Error: {msg}", "concat",
     {"function": "cobra.CheckErr"}),
    ("cobra", "completions.go", 51, "raise", "flagCompError",
     "Subcommand '{e.subCommand}' does not support flag '{e.flagName}'", "concat",
     {"function": "cobra.(*flagCompError).Error"}),
    ("cobra", "completions.go", 632, "raise", "flagCompError",
     "Subcommand '{finalCmd.Name()}' does not support flag '{flagName}'", "construct", {}),
    ("cobra", "doc/man_docs.go", 130, "raise", "fmt.Errorf",
     "invalid SOURCE_DATE_EPOCH: {err}", "format", {"function": "doc.fillHeader"}),
    ("mux", "mux.go", 21, "raise", "ErrNotFound", "no matching route was found", "literal", {}),
    ("mux", "regexp.go", 135, "raise", "panic",
     "route {template} contains capture groups in its regexp. Only non-capturing groups are "
     "accepted: e.g. (?:pattern) instead of (pattern)", "concat", {"message_end_line": 136}),
    ("mux", "route.go", 580, "raise", "errors.New", "mux: route doesn't have a host", "literal",
     {"function": "mux.(*Route).URLHost"}),
    ("echo", "echo.go", 271, "http", "ErrNotFound", "Not Found", "default",
     {"http_status": 404}),
    ("echo", "echo.go", 874, "raise", "HTTPError", "code={he.Code}, message={he.Message}",
     "format", {"function": "echo.(*HTTPError).Error"}),
    ("echo", "middleware/csrf.go", 154, "http", "echo.NewHTTPError", "invalid csrf token",
     "literal", {"http_status": 403}),
    ("echo", "middleware/jwt.go", 89, "http", "ErrJWTMissing", "missing or malformed jwt",
     "literal", {"http_status": 400}),
    ("echo", "middleware/jwt.go", 236, "raise", "ErrJWTMissing", "missing or malformed jwt",
     "sentinel", {"defined_at": Location(path="middleware/jwt.go", line=89)}),
    ("echo", "response.go", 56, "log", "WARNING", "response already committed", "literal",
     {"severity": "warning"}),
    ("grpc", "health/server.go", 62, "raise", "status.Error",
     "rpc error: code = NotFound desc = unknown service", "literal", {"error_code": "NotFound"}),
    ("grpc", "clientconn.go", 66, "raise", "ErrClientConnClosing",
     "rpc error: code = Canceled desc = grpc: the client connection is closing", "literal",
     {"error_code": "Canceled"}),
    ("grpc", "balancer/base/balancer.go", 132, "raise", "ErrBadResolverState",
     "bad resolver state", "sentinel",
     {"defined_at": Location(path="balancer/balancer.go", line=335)}),
    ("grpc", "credentials/alts/utils.go", 92, "exit", "log.Fatal",
     "failure to read manufacturer information: {err}", "format", {"severity": "critical"}),
    ("grpc", "credentials/alts/internal/conn/aeadrekey.go", 47, "raise", "KeySizeError",
     "alts/conn: invalid key size {strconv.Itoa(int(k))}", "concat", {}),
]  # fmt: skip


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(
    ("package", "path", "line", "kind", "cls", "template", "form", "fields"),
    EXPECTED,
    ids=[f"{e[0]}:{e[1]}:{e[2]}" for e in EXPECTED],
)
def test_real_records(go_records, package, path, line, kind, cls, template, form, fields):
    found = [r for r in go_records[package] if r.file_path == path and r.line_number == line]
    assert len(found) == 1, [(r.error_class, r.error_message) for r in found]
    record = found[0]
    assert (record.kind.value, record.error_class, record.error_message, record.message_form) == (
        kind,
        cls,
        template,
        form,
    )
    assert record.language == "go"
    for name, value in fields.items():
        got = getattr(record, name)
        assert (got.value if hasattr(got, "value") else got) == value, name


@pytest.mark.network
@pytest.mark.slow
def test_real_corpora_totals(go_records):
    counts = {name: len(records) for name, records in go_records.items()}
    assert counts["cobra"] == 26 and counts["mux"] == 22 and counts["echo"] == 88
    assert 400 <= counts["grpc"] <= 520
    grpc = go_records["grpc"]
    assert sum(r.error_code == "NotFound" for r in grpc) >= 5
    assert not [r for r in grpc if r.file_path.endswith("_test.go")]


COBRA_PANIC = """\
panic: group id 'admin' is not defined for subcommand 'app serve'

goroutine 1 [running]:
github.com/spf13/cobra.(*Command).checkCommandGroups(0xc000004300)
\t/root/go/pkg/mod/github.com/spf13/cobra@v1.6.1/command.go:1105 +0x1a5
github.com/spf13/cobra.(*Command).ExecuteC(0xc000004300)
\t/root/go/pkg/mod/github.com/spf13/cobra@v1.6.1/command.go:1003 +0x1b8
github.com/spf13/cobra.(*Command).Execute(...)
\t/root/go/pkg/mod/github.com/spf13/cobra@v1.6.1/command.go:968
main.main()
\t/home/u/src/app/main.go:21 +0x1e5
exit status 2
"""


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "package", "path", "line", "captures"),
    [
        (
            COBRA_PANIC,
            "cobra",
            "command.go",
            1105,
            {"sub.GroupID": "admin", "sub.CommandPath()": "app serve"},
        ),
        (
            "Error: requires at least 1 arg(s), only received 0\n",
            "cobra",
            "args.go",
            77,
            {"n": "1", "len(args)": "0"},
        ),
        # A Go error wrapped by its callers: found inside the chain.
        (
            "2024/01/02 15:04:05 serve: build router: mux: route doesn't have a host\n",
            "mux",
            "route.go",
            None,
            None,
        ),
        (
            "rpc error: code = NotFound desc = unknown service",
            "grpc",
            "health/server.go",
            62,
            {},
        ),
    ],
    ids=["cobra-panic", "cobra-message", "mux-wrapped", "grpc-client-error"],
)
def test_explain_real_go_errors(go_store, text, package, path, line, captures):
    with SQLiteStore(go_store) as store:
        answer = Explainer.for_database(store, go_store).explain(text)
    best = answer.matches[0]
    assert best.kind is MatchKind.EXACT
    assert best.record.repo == f"debian:{package}"
    assert best.record.file_path == path
    if line is not None:
        assert best.record.line_number == line and not answer.ambiguous
    else:
        assert answer.ambiguous  # URLHost and GetHostTemplate return the same error
    if captures is not None:
        assert best.captures == captures
    if text is COBRA_PANIC:
        assert best.record.kind is SiteKind.RAISE and best.record.error_class == "panic"
        assert any("frame points at the record's line" in e for e in best.evidence)
