"""Templates and patterns, proven against the real formatting: hypothesis generates hole values,
Python formats the message with the very code errdex extracted, and the record must match it.

Each case is a small function whose message is built by one form (f-string conversions and
specs, ``%`` with a tuple, a mapping or one value, ``str.format`` positional, numbered,
keyword, attribute and index fields, ``+``, ``join``, implicit concatenation, logging's lazy
``%``, a variable assigned in branches). errdex mines the module once; for every example the
function is called with the generated values, and the message it raises or logs must be matched
in full by ``compile_template(record.template)`` (empty values included) and by
``record.messagePattern`` (``re.DOTALL``) whenever every value is non-empty.
"""

from __future__ import annotations

import logging
import re
import textwrap
import types
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errdex.analyze.records import build_records
from errdex.extract.files import SourceFile
from errdex.extract.python import PythonExtractor
from errdex.match.compile import compile_template
from errdex.models import ErrorRecord, SourceInfo

# (parameters with their kind, body); kinds: s = text, i = int, f = float, o = an object with
# text attributes ``name``/``place``, m = a mapping with text values under ``k``/``j``.
CASES: dict[str, tuple[dict[str, str], str]] = {
    "fstring-conversions": (
        {"a": "s", "b": "s", "c": "s", "d": "s"},
        'raise Raised(f"x {a!r} y {b!s} z {c!a} w {d}.")',
    ),
    "fstring-specs": (
        {"a": "s", "b": "s", "n": "f", "i": "i"},
        'raise Raised(f"[{a:>12}] [{b:^7}] {n:.2f} {i:05d} {i:x} {a!r:<30}|")',
    ),
    "fstring-debug-and-expressions": (
        {"a": "s", "b": "s"},
        'raise Raised(f"{a=} and {len(b)} and {a + b} and {{literal braces}}")',
    ),
    "percent-tuple": (
        {"a": "s", "b": "s", "c": "s", "n": "i", "x": "f"},
        'raise Raised("a %s b %r c %5s d %-3s %d %.3f %%" % (a, b, c, b, n, x))',
    ),
    "percent-star-width": (
        {"a": "s", "n": "i"},
        'raise Raised("[%*s] (%s)" % (8, a, n))',
    ),
    "percent-mapping": (
        {"a": "s", "b": "s"},
        'raise Raised("%(x)s and %(y)r, again %(x)s." % {"x": a, "y": b})',
    ),
    "percent-single": ({"a": "s"}, 'raise Raised("value: %s!" % a)'),
    "gettext-percent-mapping": (
        {"a": "s"},
        'raise Raised(_("Hello %(who)s, welcome.") % {"who": a})',
    ),
    "format-positional": (
        {"a": "s", "b": "s"},
        'raise Raised("{} and {!r}; {:>6}".format(a, b, a))',
    ),
    "format-numbered": ({"a": "s", "b": "s"}, 'raise Raised("{1}-{0}-{1}".format(a, b))'),
    "format-keyword": (
        {"a": "s", "b": "s"},
        'raise Raised("{x}/{y:>4}/{{x}}".format(x=a, y=b))',
    ),
    "format-attribute": (
        {"o": "o"},
        'raise Raised("{0.name} at {0.place}".format(o))',
    ),
    "format-index": (
        {"m": "m", "n": "m"},
        'raise Raised("{0[k]} and {d[j]}".format(m, d=n))',
    ),
    "concat": (
        {"a": "s", "b": "s"},
        'raise Raised("start " + a + " mid " + str(b) + " end")',
    ),
    "join": ({"a": "s", "b": "s"}, 'raise Raised(", ".join(["x", a, "y", b]))'),
    "implicit-concatenation": (
        {"a": "s", "b": "s"},
        'raise Raised("part one " f"{a} " "two " + "{}".format(b))',
    ),
    "constant-format": (
        {"a": "s", "b": "s"},
        "raise Raised(TEMPLATE.format(a, name=b))",
    ),
    "variable-branches": (
        {"a": "s", "b": "s"},
        textwrap.dedent(
            """\
            if a < b:
                msg = f"first {a!r}"
            else:
                msg = "second " + b
            msg += " (%s)" % a
            raise Raised(msg)"""
        ),
    ),
    "logging-lazy-percent": (
        {"a": "s", "b": "s", "n": "i"},
        'logger.error("got %s and %r after %d tries", a, b, n)',
    ),
    "logging-lazy-mapping": (
        {"a": "s"},
        'logger.warning("%(x)s is deprecated; %(x)s!", {"x": a})',
    ),
}

HEADER = textwrap.dedent(
    """\
    import logging

    logger = logging.getLogger("errdex.property")
    TEMPLATE = "{0} is not {name}!"


    class Raised(Exception):
        pass


    def _(text):
        return text

    """
)

# Text that is hostile to a naive template or regex: regex metacharacters, newlines, braces,
# quotes, format directives, unicode, and the empty string.
HOSTILE = st.sampled_from(
    ["", " ", "\n", ".*", "(.+?)", "\\", "$1", "{}", "{0}", "%s", "%%", "'", '"', "é", "🙂", "]["]
)
TEXT = st.one_of(
    st.text(max_size=12),
    st.text(alphabet=".^$*+?{}[]\\|()\n'\"%: é🙂x", max_size=12),
    HOSTILE,
    st.lists(HOSTILE, max_size=4).map("".join),
)
KINDS = {
    "s": TEXT,
    "i": st.integers(min_value=-(10**6), max_value=10**6),
    "f": st.floats(allow_nan=False, allow_infinity=False, width=32),
    "o": st.builds(types.SimpleNamespace, name=TEXT, place=TEXT),
    "m": st.fixed_dictionaries({"k": TEXT, "j": TEXT}),
}


def _source() -> tuple[str, dict[str, int]]:
    lines = HEADER.splitlines()
    first_lines: dict[str, int] = {}
    for index, (name, (params, body)) in enumerate(CASES.items()):
        lines.append(f"def case_{index}({', '.join(params)}):")
        first_lines[name] = len(lines) + 1
        lines.extend("    " + line for line in body.splitlines())
        lines.append("")
    return "\n".join(lines) + "\n", first_lines


SOURCE, FIRST_LINES = _source()


@pytest.fixture(scope="module")
def mined() -> tuple[dict[str, object], dict[str, list[ErrorRecord]]]:
    extractor = PythonExtractor()
    result = extractor.extract(SourceFile("cases.py", SOURCE.encode()))
    records = build_records(
        extractor.link([result]),
        SourceInfo(key="cases", repo="cases", kind="directory"),
        analyzed_at=datetime.now(timezone.utc),
    )
    by_case: dict[str, list[ErrorRecord]] = {}
    for name, (_, body) in CASES.items():
        first = FIRST_LINES[name]
        last = first + len(body.splitlines()) - 1
        by_case[name] = [r for r in records if first <= r.line_number <= last]
    namespace: dict[str, object] = {}
    exec(compile(SOURCE, "cases.py", "exec"), namespace)
    return namespace, by_case


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run_case(namespace: dict[str, object], name: str, values: dict[str, object]) -> str:
    """Call the case's function with the values; return the message it raises or logs."""
    function = namespace[f"case_{list(CASES).index(name)}"]
    logger = logging.getLogger("errdex.property")
    capture = _Capture()
    logger.addHandler(capture)
    logger.propagate = False
    try:
        function(**values)  # type: ignore[operator]
    except Exception as exc:
        if type(exc).__name__ != "Raised":
            raise
        return str(exc)
    finally:
        logger.removeHandler(capture)
    assert capture.messages, "the case neither raised nor logged"
    return capture.messages[-1]


def _non_empty(value: object) -> bool:
    if isinstance(value, str):
        return value != ""
    if isinstance(value, types.SimpleNamespace):
        return all(_non_empty(v) for v in vars(value).values())
    if isinstance(value, dict):
        return all(_non_empty(v) for v in value.values())
    return True


def test_every_case_is_extracted_as_a_template(mined):
    _, by_case = mined
    for name, records in by_case.items():
        assert records, name
        assert all(not r.opaque for r in records), name
        assert all(r.template.holes for r in records), name
    assert {r.message_form for r in by_case["percent-mapping"]} == {"percent"}
    assert {r.message_form for r in by_case["constant-format"]} == {"constant-ref"}
    assert len(by_case["variable-branches"]) == 2


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_the_real_message_matches_the_template_and_the_pattern(mined, name, data):
    namespace, by_case = mined
    params, _ = CASES[name]
    values = {param: data.draw(KINDS[kind], label=param) for param, kind in params.items()}
    message = run_case(namespace, name, values)
    records = by_case[name]
    matched = [r for r in records if compile_template(r.template).match(message) is not None]
    assert matched, (message, [r.template.text for r in records])
    if all(_non_empty(v) for v in values.values()):
        assert any(
            re.fullmatch(r.message_pattern, message, re.DOTALL) is not None for r in matched
        ), (message, [r.message_pattern for r in matched])
