"""Rust extraction: every message form on small fixtures, the std formatting property (with the
real ``rustc`` when it is installed), and real crates from Debian's ``librust-*-dev`` packages.

Real crates (pinned; every expected record below was checked against that version's source):
``librust-semver-dev=1.0.14-1`` (a ``Display`` impl with one arm per ``ErrorKind`` variant, and
``Err(Error::new(ErrorKind::…))`` at the raise sites) and ``librust-syntect-dev=5.0.0-1``
(thiserror ``#[error]`` attributes, ``.expect``, ``eprintln!``, ``Err(format!(…))``).
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from corpus import debian_package
from hypothesis import given, settings
from hypothesis import strategies as st

from errdex.analyze.templates import seed_pattern
from errdex.extract.files import SourceFile, open_source
from errdex.extract.rust import RustExtractor, format_parts, unescape
from errdex.match.compile import compile_template
from errdex.match.explain import Explainer
from errdex.models import MatchKind, RaiseSite, SiteKind
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore


def mine(files: dict[str, str]) -> list[RaiseSite]:
    extractor = RustExtractor(window=2)
    results = [
        extractor.extract(SourceFile(path, textwrap.dedent(text).encode()))
        for path, text in files.items()
    ]
    return extractor.link(results)


def at(sites: list[RaiseSite], line: int, path: str | None = None) -> RaiseSite:
    found = [s for s in sites if s.line == line and (path is None or s.path == path)]
    assert len(found) == 1, (line, [(s.line, s.template.text) for s in sites])
    return found[0]


def styles(site: RaiseSite) -> list[tuple[str, str]]:
    return [(p.text, p.style) for p in site.template.parts if p.hole]


# -- forms -----------------------------------------------------------------------------------


def test_panics_and_their_std_texts():
    sites = mine(
        {
            "src/lib.rs": """\
            fn f(x: u8, name: &str) {
                panic!("bad value {} for {name:?}", x);
                unreachable!();
                unreachable!("state {x}");
                todo!();
                todo!("later: {}", name);
                unimplemented!();
                unimplemented!("no {}", x);
                std::panic!("qualified");
                panic!();
            }
            """
        }
    )
    first = at(sites, 2)
    assert (first.error_class, first.kind, first.form) == ("panic", SiteKind.RAISE, "format")
    assert first.template.text == "bad value {x} for {name}"
    assert styles(first) == [("x", ""), ("name", ":?")]
    assert first.function == "f"
    assert at(sites, 3).template.text == "internal error: entered unreachable code"
    assert at(sites, 4).template.text == "internal error: entered unreachable code: state {x}"
    assert at(sites, 5).template.text == "not yet implemented"
    assert at(sites, 6).template.text == "not yet implemented: later: {name}"
    assert at(sites, 7).template.text == "not implemented"
    assert at(sites, 8).template.text == "not implemented: no {x}"
    assert at(sites, 9).template.text == "qualified"
    assert at(sites, 10).template.text == "explicit panic"


def test_assertions_print_the_condition_or_both_sides():
    sites = mine(
        {
            "src/lib.rs": """\
            fn f(a: i32, b: i32, v: &[u8]) {
                assert!(a  ==  2 &&
                    v.len() > 0);
                assert!(a > b, "a ({}) must exceed b ({b})", a);
                assert_eq!(a, b);
                assert_ne!(a, b, "same {}", a);
                debug_assert_eq!(v.len(), 3);
                debug_assert!(b < 0);
            }
            """
        }
    )
    plain = at(sites, 2)
    assert (plain.kind, plain.error_class) == (SiteKind.ASSERT, "panic")
    assert plain.template.text == "assertion failed: a == 2 && v.len() > 0"
    assert plain.end_line == 3
    assert at(sites, 4).template.text == "a ({a}) must exceed b ({b})"
    equal = at(sites, 5)
    assert equal.template.text == "assertion `left == right` failed\n  left: {a}\n right: {b}"
    assert styles(equal) == [("a", ":?"), ("b", ":?")]
    assert at(sites, 6).template.text == (
        "assertion `left != right` failed: same {a}\n  left: {a}\n right: {b}"
    )
    assert at(sites, 7).template.text.endswith("left: {v.len()}\n right: {3}")
    assert at(sites, 8).template.text == "assertion failed: b < 0"


def test_anyhow_macros_context_and_ensure():
    sites = mine(
        {
            "src/main.rs": """\
            use anyhow::{anyhow, bail, ensure, Context, Result};
            fn f(path: &str, n: usize) -> Result<()> {
                bail!("cannot open {path}");
                return Err(anyhow!("bad count {}", n));
                ensure!(n > 0, "n must be positive, got {}", n);
                ensure!(n == 3);
                ensure!(path.is_empty());
                std::fs::read(path).context("reading the config")?;
                std::fs::read(path).with_context(|| format!("reading {}", path))?;
                bail!(err);
                Ok(())
            }
            """
        }
    )
    assert {s.error_class for s in sites} == {"anyhow"}
    assert at(sites, 3).template.text == "cannot open {path}"
    assert at(sites, 4).template.text == "bad count {n}"
    assert at(sites, 5).template.text == "n must be positive, got {n}"
    assert at(sites, 6).template.text == "Condition failed: `n == 3` ({n} vs {3})"
    assert at(sites, 7).template.text == "Condition failed: `path.is_empty()`"
    context = at(sites, 8)
    assert (context.template.text, context.chained) == ("reading the config", True)
    assert at(sites, 9).template.text == "reading {path}"
    opaque = at(sites, 10)
    assert (opaque.form, opaque.template.is_opaque) == ("opaque", True)


def test_string_errors_expect_and_io_errors():
    sites = mine(
        {
            "src/lib.rs": """\
            use std::io;
            const MISSING: &str = "the key is missing";
            fn f(s: &str, v: Vec<u8>) -> Result<u8, String> {
                let n: u8 = s.parse().expect("need a number");
                let first = v.first().expect("empty vector");
                let x = v.get(3).expect(MISSING);
                if s.is_empty() { return Err(format!("empty input after {} bytes", v.len())); }
                if s == "a" { return Err("no a".to_string()); }
                if s == "b" { return Err("no b".into()); }
                if s == "c" { return Err(String::from("no c")); }
                Err(io::Error::new(io::ErrorKind::InvalidData, format!("bad data: {s}")))?;
                Err(io::Error::other("other failure"))?;
                Err(e.to_string())
            }
            fn g() -> Result<(), &'static str> { Err("static str") }
            """
        }
    )
    result = at(sites, 4)
    assert (result.error_class, result.template.text) == ("panic", "need a number: {err}")
    assert styles(result) == [("err", ":?")]
    assert at(sites, 5).template.text == "empty vector"
    constant = at(sites, 6)
    assert (constant.template.text, constant.form) == ("the key is missing", "constant")
    formatted = at(sites, 7)
    assert (formatted.error_class, formatted.template.text) == (
        "String",
        "empty input after {v.len()} bytes",
    )
    assert [at(sites, n).template.text for n in (8, 9, 10)] == ["no a", "no b", "no c"]
    io_error = at(sites, 11)
    assert (io_error.error_class, io_error.error_code, io_error.template.text) == (
        "io::Error",
        "InvalidData",
        "bad data: {s}",
    )
    assert at(sites, 12).template.text == "other failure"
    assert not [s for s in sites if s.line == 13]  # the message is not in the source
    assert (at(sites, 15).error_class, at(sites, 15).template.text) == ("&str", "static str")


def test_variables_and_constants_are_resolved_in_format_holes():
    sites = mine(
        {
            "src/lib.rs": """\
            static PREFIX: &str = "fatal:";
            fn f(x: u32) {
                let msg = format!("value {} too large", x);
                panic!("{}", msg);
                panic!("{} stop", PREFIX);
                let other = compute();
                panic!("{}", other);
            }
            """
        }
    )
    assert (at(sites, 4).template.text, at(sites, 4).form) == ("value {x} too large", "variable")
    assert at(sites, 5).template.text == "fatal: stop"
    assert (at(sites, 7).template.text, at(sites, 7).form) == ("{other}", "opaque")


def test_logs_and_eprintln():
    sites = mine(
        {
            "src/lib.rs": """\
            use log::{error, warn};
            fn f(path: &str, e: std::io::Error) {
                error!("cannot read {}: {}", path, e);
                warn!(target: "cfg", "deprecated key {path}");
                log::error!("qualified {}", 1);
                tracing::error!(error = %e, retries = 3, "connection lost");
                tracing::warn!(?path, "odd path");
                eprintln!("error: {e}");
                info!("not a site");
                error!(logger, "slog logger {}", 1);
            }
            """
        }
    )
    first = at(sites, 3)
    assert (first.kind, first.error_class, first.template.text) == (
        SiteKind.LOG,
        "ERROR",
        "cannot read {path}: {e}",
    )
    warned = at(sites, 4)
    assert (warned.error_class, warned.severity.value, warned.template.text) == (
        "WARN",
        "warning",
        "deprecated key {path}",
    )
    assert at(sites, 5).template.text == "qualified {1}"
    assert at(sites, 6).template.text == "connection lost {error, retries}"
    assert at(sites, 7).template.text == "odd path {path}"
    assert (at(sites, 8).error_class, at(sites, 8).template.text) == ("ERROR", "error: {e}")
    assert not [s for s in sites if s.line == 9]


def test_thiserror_attributes_and_display_arms_and_their_variants_across_files():
    sites = mine(
        {
            "src/error.rs": """\
            use std::fmt;
            #[derive(Debug, thiserror::Error)]
            pub enum ParseError {
                #[error("invalid digit {0:?} at {pos}", pos = .1)]
                InvalidDigit(char, usize),
                #[error("missing field `{name}`")]
                Missing { name: String },
                #[error(transparent)]
                Io(#[from] std::io::Error),
            }

            #[derive(Debug, thiserror::Error)]
            #[error("config {path} is invalid: {source}")]
            pub struct ConfigError { path: String, source: ParseError }

            pub enum Kind { Empty, TooLong(usize) }
            pub struct Error { kind: Kind }
            impl fmt::Display for Error {
                fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                    match &self.kind {
                        Kind::Empty => formatter.write_str("empty string"),
                        Kind::TooLong(n) => {
                            write!(formatter, "too long by {} ", n)?;
                            formatter.write_str("bytes")
                        }
                    }
                }
            }
            pub struct Point(u8);
            impl fmt::Display for Point {
                fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "({})", self.0) }
            }
            """,
            "src/parse.rs": """\
            use crate::error::{Error, Kind, ParseError};
            fn parse(s: &str) -> Result<u8, Error> {
                if s.is_empty() { return Err(Error { kind: Kind::Empty }); }
                let c = s.chars().next().ok_or(ParseError::Missing { name: "x".into() })?;
                Err(Error { kind: Kind::TooLong(s.len()) })
            }
            fn other() -> Result<(), Unknown> { Err(Unknown::Variant) }
            """,
        }
    )
    digit = at(sites, 4, "src/error.rs")
    assert (digit.error_class, digit.template.text) == (
        "ParseError::InvalidDigit",
        "invalid digit {0} at {.1}",
    )
    assert styles(digit) == [("0", ":?"), (".1", "")]
    assert at(sites, 6, "src/error.rs").template.text == "missing field `{name}`"
    assert not [s for s in sites if s.path == "src/error.rs" and s.line == 8]
    config = at(sites, 13, "src/error.rs")
    assert (config.error_class, config.template.text) == (
        "ConfigError",
        "config {path} is invalid: {source}",
    )
    empty = at(sites, 21, "src/error.rs")
    assert (empty.error_class, empty.template.text) == ("Kind::Empty", "empty string")
    long = at(sites, 22, "src/error.rs")
    assert (long.error_class, long.template.text) == ("Kind::TooLong", "too long by {n} bytes")
    assert not [s for s in sites if s.error_class == "Point"]  # not an error type
    raised = at(sites, 3, "src/parse.rs")
    assert (raised.error_class, raised.form, raised.template.text) == (
        "Kind::Empty",
        "variant",
        "empty string",
    )
    assert at(sites, 4, "src/parse.rs").template.text == "missing field `{name}`"
    assert at(sites, 5, "src/parse.rs").template.text == "too long by {n} bytes"
    assert not [s for s in sites if s.path == "src/parse.rs" and s.line == 7]


def test_scopes_tests_and_macro_bodies():
    sites = mine(
        {
            "src/lib.rs": """\
            struct Parser;
            impl Parser {
                fn run(&self) { panic!("in method"); }
            }
            trait Check { fn check(&self) { panic!("in trait"); } }
            cfg_if::cfg_if! {
                if #[cfg(unix)] {
                    fn unix() { panic!("inside cfg_if"); }
                }
            }
            #[cfg(test)]
            mod tests {
                #[test]
                fn t() { panic!("test code"); }
            }
            #[test]
            fn top_level_test() { assert!(false); }
            fn closure() { let f = || panic!("in closure"); }
            """
        }
    )
    assert at(sites, 3).function == "Parser::run"
    assert at(sites, 5).function == "Check::check"
    assert at(sites, 8).template.text == "inside cfg_if"
    assert not [s for s in sites if s.line in (14, 17)]
    assert at(sites, 18).function == "closure"


def test_string_escapes_and_raw_strings():
    assert unescape(r'"a\nb\t\"q\" \u{e9}\x41\\ \0"') == 'a\nb\t"q" éA\\ \0'
    assert unescape('"line \\\n      continued"') == "line continued"
    assert unescape('r#"raw "quoted" \\n"#') == 'raw "quoted" \\n'
    assert unescape('r"plain"') == "plain"
    assert unescape("x") is None
    sites = mine({"src/lib.rs": 'fn f() { panic!(r#"raw {{ "{}" }}"#, 1); }\n'})
    assert sites[0].template.text == 'raw { "{1}" }'


def test_format_strings_follow_std_fmt():
    parts = format_parts("{:>8}|{0:.*}|{name:#?}|{x:08.3}|{{}}|{}", ["a", "b", "c"], {"name": "n"})
    assert [(p.text, p.hole, p.style) for p in parts] == [
        ("a", True, ":>8"),
        ("|", False, ""),
        ("a", True, ":.*"),
        ("|", False, ""),
        ("n", True, ":#?"),
        ("|", False, ""),
        ("x", True, ":08.3"),
        ("|{}|", False, ""),
        ("c", True, ""),
    ]


def test_broken_files_keep_their_valid_sites():
    extractor = RustExtractor()
    source = b'fn ok() { panic!("still here"); }\nfn broken( { let = ; }\nfn ok2() { todo!() }\n'
    result = extractor.extract(SourceFile("src/lib.rs", source))
    assert "still here" in [s.template.text for s in result.sites]


# -- the property: std's formatting ----------------------------------------------------------

PROGRAM = textwrap.dedent(
    """\
    use std::fmt;
    use std::io::Read;

    const FIXED: &str = "constant {braces} message";

    enum Failure {
        Pair(String, i64),
        Named { name: String },
    }

    impl fmt::Display for Failure {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            match self {
                Failure::Pair(s, k) => write!(f, "pair <{}> and {k:>5}!", s),
                Failure::Named { name } => write!(f, "named {name:?} {{x}}"),
            }
        }
    }

    impl std::error::Error for Failure {}
    impl fmt::Debug for Failure {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { fmt::Display::fmt(self, f) }
    }

    fn case_0(a: String, b: String, x: String) {
        panic!("a {} b {:?} c {{}} d {x}", a, b);
    }

    fn case_1(a: String, b: String, i: i64, z: f64) {
        panic!("[{:>8}] [{:<4}] [{:^5}] {:08.3} {:+} {:#x} {n}", a, b, a, z, i, i, n = b);
    }

    fn case_2(a: String, b: String) {
        unreachable!("state {0} and {0:?} / {1}", a, b);
    }

    fn case_3(a: String) {
        todo!("later: {}\\t\\u{e9}", a);
    }

    fn case_4(a: String, b: String, i: i64) {
        let b = b + "~";
        assert_eq!(a, b, "mismatch {}", i);
    }

    fn case_5(a: String) {
        let r: Result<u8, String> = Err(a);
        r.expect("need value");
    }

    fn case_6(a: String, i: i64) -> Result<(), String> {
        Err(format!("cannot {} \\u{e9}\\n{:?}", a, i))
    }

    fn case_7(a: String, i: i64) -> Result<(), Failure> {
        Err(Failure::Pair(a, i))
    }

    fn case_8(a: String) -> Result<(), Failure> {
        Err(Failure::Named { name: a })
    }

    fn case_9(i: i64) {
        assert!(i > 10_000_000 ||
            i < -10_000_000);
    }

    fn case_10(a: String) {
        let msg = format!("built {} earlier", a);
        panic!("{}", msg);
    }

    fn case_11() {
        panic!("{}", FIXED);
    }

    fn hex(text: &str) -> String {
        let bytes: Vec<u8> = (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect();
        String::from_utf8(bytes).unwrap()
    }

    fn run(case: usize, args: &[&str]) -> String {
        let s = |n: usize| hex(args[n]);
        let i = |n: usize| args[n].parse::<i64>().unwrap();
        let z = |n: usize| args[n].parse::<f64>().unwrap();
        let outcome = std::panic::catch_unwind(|| match case {
            0 => { case_0(s(0), s(1), s(2)); String::new() }
            1 => { case_1(s(0), s(1), i(2), z(3)); String::new() }
            2 => { case_2(s(0), s(1)); String::new() }
            3 => { case_3(s(0)); String::new() }
            4 => { case_4(s(0), s(1), i(2)); String::new() }
            5 => { case_5(s(0)); String::new() }
            6 => case_6(s(0), i(1)).unwrap_err(),
            7 => case_7(s(0), i(1)).unwrap_err().to_string(),
            8 => case_8(s(0)).unwrap_err().to_string(),
            9 => { case_9(i(0)); String::new() }
            10 => { case_10(s(0)); String::new() }
            _ => { case_11(); String::new() }
        });
        match outcome {
            Ok(text) => text,
            Err(payload) => payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap(),
        }
    }

    fn main() {
        std::panic::set_hook(Box::new(|_| {}));
        let mut input = String::new();
        std::io::stdin().read_to_string(&mut input).unwrap();
        for line in input.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            let case: usize = fields[0].parse().unwrap();
            let out = run(case, &fields[1..]);
            let encoded: String = out.bytes().map(|b| format!("{:02x}", b)).collect();
            println!("{}", encoded);
        }
    }
    """
)

# Parameter kinds of each case: s = text, i = integer, f = float.
CASES: list[str] = ["sss", "ssif", "ss", "s", "ssi", "s", "si", "si", "s", "i", "s", ""]


def _debug_str(value: str) -> str:
    """Rust's ``{:?}`` of a str (enough for the generated text: quotes and the usual escapes)."""
    out = []
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif char == "\0":
            out.append("\\0")
        elif not char.isprintable() and char != " ":
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _hex64(value: int) -> str:
    return "0x" + format(value & 0xFFFF_FFFF_FFFF_FFFF, "x")


def expected(case: int, v: list) -> str:
    """What the Rust program prints for a case: std's formatting, reimplemented here."""
    match case:
        case 0:
            return f"a {v[0]} b {_debug_str(v[1])} c {{}} d {v[2]}"
        case 1:
            a, b, i, z = v
            return f"[{a:>8}] [{b:<4}] [{a:^5}] {z:08.3f} {i:+d} {_hex64(i)} {b}"
        case 2:
            return (
                "internal error: entered unreachable code: "
                f"state {v[0]} and {_debug_str(v[0])} / {v[1]}"
            )
        case 3:
            return f"not yet implemented: later: {v[0]}\t\u00e9"
        case 4:
            a, b, i = v
            return (
                f"assertion `left == right` failed: mismatch {i}\n"
                f"  left: {_debug_str(a)}\n right: {_debug_str(b + '~')}"
            )
        case 5:
            return f"need value: {_debug_str(v[0])}"
        case 6:
            return f"cannot {v[0]} \u00e9\n{v[1]}"
        case 7:
            return f"pair <{v[0]}> and {v[1]:>5}!"
        case 8:
            return f"named {_debug_str(v[0])} {{x}}"
        case 9:
            return "assertion failed: i > 10_000_000 || i < -10_000_000"
        case 10:
            return f"built {v[0]} earlier"
        case _:
            return "constant {braces} message"


HOSTILE = ["", " ", "\n", ".*", "(.+?)", "\\", "{}", "{0}", "%s", "'", '"', "é", "🙂", "]["]
TEXT = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12),
    st.text(alphabet=".^$*+?{}[]\\|()\n'\"%: é🙂x\t", max_size=12),
    st.sampled_from(HOSTILE),
)
KINDS = {
    "s": TEXT,
    "i": st.integers(min_value=-(10**6), max_value=10**6),
    "f": st.floats(allow_nan=False, allow_infinity=False, width=32, min_value=-1e6, max_value=1e6),
}


@pytest.fixture(scope="module")
def program_sites() -> dict[int, list[RaiseSite]]:
    sites = mine({"src/main.rs": PROGRAM})
    lines = PROGRAM.splitlines()
    by_case: dict[int, list[RaiseSite]] = {}
    for number, text in enumerate(lines, start=1):
        found = re.match(r"fn case_(\d+)", text)
        if found is not None:
            end = next(n for n in range(number, len(lines) + 1) if lines[n - 1] == "}")
            by_case[int(found[1])] = [s for s in sites if number <= s.line <= end]
    # The Display arms are the messages of cases 7 and 8 (the raise sites are linked to them).
    by_case[7] = [s for s in sites if s.error_class == "Failure::Pair"]
    by_case[8] = [s for s in sites if s.error_class == "Failure::Named"]
    return by_case


def check(sites: list[RaiseSite], message: str, values: list) -> None:
    matched = [s for s in sites if compile_template(s.template).match(message) is not None]
    assert matched, (message, [s.template.text for s in sites])
    if all(v != "" for v in values):
        assert any(re.fullmatch(seed_pattern(s.template), message, re.DOTALL) for s in matched), (
            message,
            [seed_pattern(s.template) for s in matched],
        )


def test_every_case_is_mined(program_sites):
    for case in range(len(CASES)):
        assert program_sites[case], case
    assert {s.form for s in program_sites[10]} == {"variable"}
    assert {s.form for s in program_sites[11]} == {"constant"}
    assert {s.form for s in program_sites[7]} >= {"variant", "format"}


@pytest.mark.parametrize("case", range(len(CASES)))
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_std_formatting_matches_the_template(program_sites, case, data):
    values = [data.draw(KINDS[kind]) for kind in CASES[case]]
    check(program_sites[case], expected(case, values), values)


def _encode(kind: str, value: object) -> str:
    if kind == "s":
        return str(value).encode().hex()
    return repr(value)


def test_the_real_rust_runtime_agrees(program_sites, tmp_path):
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("rustc is not installed: the real-runtime half of the property is skipped")
    source = tmp_path / "main.rs"
    source.write_text(PROGRAM)
    binary = tmp_path / "cases"
    build = subprocess.run(
        [rustc, "--edition", "2021", "-o", str(binary), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    rng = random.Random(7)
    pools = {
        "s": HOSTILE + ["plain", "with space", "tab\there", "ünïcödé", "x" * 20],
        "i": [0, 1, -1, 42, -999_999, 10**6],
        "f": [0.0, -0.0, 3.14159, -2.5e-3, 123456.789, 1e-7],
    }
    samples = []
    for _ in range(25):
        for case, kinds in enumerate(CASES):
            samples.append((case, [rng.choice(pools[k]) for k in kinds]))
    lines = [
        " ".join([str(case), *(_encode(k, v) for k, v in zip(CASES[case], values, strict=True))])
        for case, values in samples
    ]
    # An empty text is sent as an empty field: split(' ') keeps it.
    run = subprocess.run(
        [str(binary)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    outputs = [bytes.fromhex(line).decode() for line in run.stdout.splitlines()]
    assert len(outputs) == len(samples)
    for (case, values), message in zip(samples, outputs, strict=True):
        assert message == expected(case, values), (case, values)
        check(program_sites[case], message, values)


# -- real crates -----------------------------------------------------------------------------

CRATES = {
    "semver": ("librust-semver-dev", "1.0.14-1", "semver-1.0.14"),
    "syntect": ("librust-syntect-dev", "5.0.0-1", "syntect-5.0.0"),
}


@pytest.fixture(scope="session")
def crate_roots() -> dict[str, Path]:
    roots = {}
    for name, (package, version, folder) in CRATES.items():
        roots[name] = debian_package(package, version) / "usr/share/cargo/registry" / folder
    return roots


@pytest.fixture(scope="session")
def crate_store(crate_roots, tmp_path_factory):
    db = tmp_path_factory.mktemp("rust") / "store.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db, languages=("rust",)), store)
        reports = {
            name: pipeline.mine(open_source(str(root), repo=f"crates:{name}"))
            for name, root in crate_roots.items()
        }
    return db, reports


def records(db: Path, repo: str):
    from errdex.store.base import SearchQuery

    with SQLiteStore(db) as store:
        found, _ = store.search(SearchQuery(repo=repo, limit=100_000))
    return found


# (crate, path, line, kind, class, template, form) — each checked against the crate's source.
KNOWN = [
    (
        "semver",
        "src/error.rs",
        34,
        "raise",
        "ErrorKind::UnexpectedEnd",
        "unexpected end of input while parsing {pos}",
        "format",
    ),
    (
        "semver",
        "src/error.rs",
        80,
        "raise",
        "ErrorKind::UnexpectedAfterWildcard",
        "unexpected character after wildcard in version req",
        "literal",
    ),
    (
        "semver",
        "src/parse.rs",
        173,
        "raise",
        "ErrorKind::Overflow",
        "value of {pos} exceeds u64::MAX",
        "variant",
    ),
    (
        "semver",
        "src/identifier.rs",
        148,
        "raise",
        "panic",
        "internal error: entered unreachable code: please refrain from storing >64 petabytes"
        " of text in semver version",
        "literal",
    ),
    (
        "syntect",
        "src/parsing/yaml_load.rs",
        24,
        "raise",
        "ParseSyntaxError::RegexCompileError",
        "Error while compiling regex '{0}': {1}",
        "format",
    ),
    (
        "syntect",
        "src/parsing/syntax_set.rs",
        288,
        "raise",
        "panic",
        "All syntax sets ought to have a plain text syntax",
        "literal",
    ),
    (
        "syntect",
        "src/parsing/regex.rs",
        69,
        "raise",
        "panic",
        "regex string should be pre-tested: {err}",
        "literal",
    ),
    (
        "syntect",
        "src/parsing/metadata.rs",
        176,
        "log",
        "ERROR",
        "malformed shell variables for scope {scope}, {e}",
        "format",
    ),
    ("syntect", "src/parsing/metadata.rs", 232, "raise", "String", "skipping {path}", "format"),
    (
        "syntect",
        "src/parsing/scope.rs",
        145,
        "raise",
        "ParseScopeError::TooManyAtoms",
        "Too many atoms. Max 2^16-2 atoms allowed.",
        "variant",
    ),
]


def test_real_crates_are_mined_without_problems(crate_store):
    _, reports = crate_store
    for name, report in reports.items():
        assert report.problems == [], name
        assert report.records > 0, name


def assert_known(db: Path, repo: str, path: str, line: int, expected: tuple, language: str):
    """The records at ``path:line`` are exactly one: (kind, class, template text, form)."""
    found = [r for r in records(db, repo) if r.file_path == path and r.line_number == line]
    assert [(r.kind.value, r.error_class, r.template.text, r.message_form) for r in found] == [
        expected
    ]
    assert found[0].language == language


@pytest.mark.parametrize(("crate", "path", "line", "kind", "cls", "template", "form"), KNOWN)
def test_known_real_records(crate_store, crate, path, line, kind, cls, template, form):
    db, _ = crate_store
    assert_known(db, f"crates:{crate}", path, line, (kind, cls, template, form), "rust")


def test_real_crates_skip_their_tests(crate_store):
    db, _ = crate_store
    paths = {r.file_path for r in records(db, "crates:syntect")}
    assert not any(p.startswith("tests/") for p in paths)
    # syntect's src/highlighting/selector.rs has only #[cfg(test)] assertions.
    assert "src/highlighting/selector.rs" not in paths


CRATE = "/root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/semver-1.0.14"
REFRAIN = "please refrain from storing >64 petabytes of text in semver version"


def test_a_real_panic_is_explained(crate_store):
    db, _ = crate_store
    panic = textwrap.dedent(
        f"""\
        thread 'main' panicked at {CRATE}/src/identifier.rs:148:17:
        internal error: entered unreachable code: {REFRAIN}
        stack backtrace:
           0: rust_begin_unwind
           1: core::panicking::panic_fmt
           2: semver::identifier::Identifier::new_unchecked
                     at {CRATE}/src/identifier.rs:148:17
           3: semver::parse::identifier
                     at {CRATE}/src/parse.rs:262:25
           4: app::main
                     at ./src/main.rs:4:13
        note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
        """
    )
    with SQLiteStore(db) as store:
        answer = Explainer.open(store, cache=None).explain(panic)
    best = answer.matches[0]
    assert best.kind is MatchKind.EXACT
    assert (best.record.file_path, best.record.line_number) == ("src/identifier.rs", 148)
    assert best.record.error_class == "panic"
    assert any("frame points at the record's line" in e for e in best.evidence)


def test_a_real_error_value_is_explained_by_its_raise_site(crate_store):
    db, _ = crate_store
    trace = textwrap.dedent(
        f"""\
        thread 'main' panicked at src/main.rs:5:40:
        bad version: Error("value of major version number exceeds u64::MAX")
        stack backtrace:
           0: rust_begin_unwind
           1: semver::parse::numeric_identifier
                     at {CRATE}/src/parse.rs:173:21
           2: app::main
                     at ./src/main.rs:5:40
        """
    )
    with SQLiteStore(db) as store:
        answer = Explainer.open(store, cache=None).explain(trace)
    assert any(
        (m.record.file_path, m.record.line_number, m.record.error_class)
        == ("src/parse.rs", 173, "ErrorKind::Overflow")
        for m in answer.matches
    ), [(m.record.file_path, m.record.line_number) for m in answer.matches]


def test_an_error_returned_from_main_is_an_exact_match(crate_store):
    # `fn main() -> Result<(), semver::Error>` prints the Debug/Display text after "Error: ",
    # whatever the error's type: the pasted class "Error" does not contradict the variant.
    db, _ = crate_store
    with SQLiteStore(db) as store:
        answer = Explainer.open(store, cache=None).explain(
            "Error: unexpected character after wildcard in version req"
        )
    best = answer.matches[0]
    assert best.kind is MatchKind.EXACT
    assert (best.record.file_path, best.record.line_number) == ("src/error.rs", 80)
    assert best.record.error_class == "ErrorKind::UnexpectedAfterWildcard"
