"""Java extraction: every message form on small fixtures, the Formatter/MessageFormat property
(with the real JVM when ``java`` is installed), and real Java from the npm registry.

Real Java (pinned; every expected record below was checked against that version's source): the
Android sources shipped in the npm packages ``react-native-fs@2.20.0``
(``android/src/main/java/com/rnfs``: a project exception ``IORejectionException(code,
message)``, ``new Exception(String.format(…))``) and ``react-native-webview@11.26.1``
(``IllegalStateException``, Android ``Log.e``/``Log.w``, ``FLog``).
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import textwrap
from decimal import ROUND_HALF_UP, Decimal

import pytest
from corpus import npm_package
from hypothesis import given, settings
from hypothesis import strategies as st

# The generated values and the check are the same for every language's property.
from test_extract_rust import HOSTILE, KINDS, assert_known, check

from errdex.extract.files import SourceFile, open_source
from errdex.extract.java import JavaExtractor, formatter_parts, message_format_parts, unescape
from errdex.match.explain import Explainer
from errdex.models import MatchKind, RaiseSite, SiteKind
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore


def mine(files: dict[str, str]) -> list[RaiseSite]:
    extractor = JavaExtractor(window=2)
    results = [
        extractor.extract(SourceFile(path, textwrap.dedent(text).encode()))
        for path, text in files.items()
    ]
    return extractor.link(results)


def at(sites: list[RaiseSite], line: int, path: str | None = None) -> list[RaiseSite]:
    return [s for s in sites if s.line == line and (path is None or s.path == path)]


def one(sites: list[RaiseSite], line: int, path: str | None = None) -> RaiseSite:
    found = at(sites, line, path)
    assert len(found) == 1, (line, [(s.line, s.template.text) for s in sites])
    return found[0]


# -- forms -----------------------------------------------------------------------------------


def test_throw_new_with_literals_concatenation_and_formats():
    sites = mine(
        {
            "src/main/java/org/x/A.java": """\
            package org.x;
            import java.text.MessageFormat;
            class A {
                void f(String name, int n, Exception e) throws Exception {
                    throw new IllegalArgumentException("bad name: " + name + " (" + n + ")");
                    throw new java.io.IOException(String.format("cannot read %s: %d%%", name, n));
                    throw new IllegalStateException("state %s".formatted(name));
                    throw new Error(MessageFormat.format("it''s {0} at {1,number}", name, n));
                    throw new RuntimeException(e);
                    throw new RuntimeException("wrapped", e);
                    throw new UnsupportedOperationException();
                    throw new IllegalStateException("tab\\there \\u00e9 'q' \\"dq\\"");
                    throw new Exception(String.format(java.util.Locale.ROOT, "%2$s-%1$s", name, n));
                    throw new IllegalArgumentException(1 + 2);
                }
            }
            """
        }
    )
    concat = one(sites, 5)
    assert (concat.error_class, concat.form, concat.template.text) == (
        "IllegalArgumentException",
        "concat",
        "bad name: {name} ({n})",
    )
    assert concat.function == "A.f" and concat.kind is SiteKind.RAISE
    formatted = one(sites, 6)
    assert (formatted.error_class, formatted.template.text) == (
        "IOException",
        "cannot read {name}: {n}%",
    )
    assert [p.style for p in formatted.template.parts if p.hole] == ["%s", "%d"]
    assert one(sites, 7).template.text == "state {name}"
    assert one(sites, 8).template.text == "it's {name} at {n}"
    cause = one(sites, 9)
    assert (cause.form, cause.template.text, cause.chained) == ("opaque", "{e}", True)
    assert one(sites, 10).template.text == "wrapped"
    assert (one(sites, 11).form, one(sites, 11).template.text) == ("empty", "")
    assert one(sites, 12).template.text == "tab\there é 'q' \"dq\""
    assert one(sites, 13).template.text == "{n}-{name}"
    assert one(sites, 14).form == "opaque"


def test_variables_constants_and_text_blocks():
    sites = mine(
        {
            "A.java": """\
            class A {
                private static final String MISSING = "the key is missing";
                static final String PREFIX = "config: ";
                void f(String key, int n) {
                    String msg;
                    if (n > 0) {
                        msg = "positive " + key;
                    } else {
                        msg = String.format("other %s", key);
                    }
                    throw new IllegalStateException(msg);
                    throw new IllegalStateException(MISSING);
                    throw new IllegalStateException(A.PREFIX + key);
                    throw new IllegalStateException(\"\"\"
                        first line
                          indented %s
                        last\\
                         joined\"\"\".formatted(key));
                    throw new IllegalStateException(unknown());
                }
            }
            """
        }
    )
    assert sorted((s.template.text, s.form) for s in at(sites, 11)) == [
        ("other {key}", "variable"),
        ("positive {key}", "variable"),
    ]
    assert (one(sites, 12).template.text, one(sites, 12).form) == ("the key is missing", "constant")
    assert one(sites, 13).template.text == "config: {key}"
    assert one(sites, 14).template.text == "first line\n  indented {key}\nlast joined"
    assert one(sites, 19).form == "opaque"


def test_project_exceptions_take_their_constructor_message_across_files():
    sites = mine(
        {
            "src/main/java/org/x/AppException.java": """\
            package org.x;
            public class AppException extends RuntimeException {
                public AppException(String what, int code) {
                    super("app failed: " + what + " (code " + code + ")");
                }
                public AppException(String message) {
                    super(message);
                }
                public AppException() {
                    this("default failure", 0);
                }
            }
            """,
            "src/main/java/org/x/NotFound.java": """\
            package org.x;
            class NotFound extends AppException {
                NotFound(String id) { super("no item " + id); }
            }
            """,
            "src/main/java/org/x/Use.java": """\
            package org.x;
            class Use {
                void f(String path, int n) {
                    throw new AppException(path, n);
                    throw new AppException("plain " + path);
                    throw new AppException();
                    throw new NotFound(path);
                    throw new Unrelated("kept as written");
                }
            }
            """,
        }
    )
    path = "src/main/java/org/x/Use.java"
    first = one(sites, 4, path)
    assert (first.error_class, first.form, first.template.text) == (
        "AppException",
        "constructor",
        "app failed: {path} (code {n})",
    )
    assert one(sites, 5, path).template.text == "plain {path}"
    assert one(sites, 6, path).template.text == "app failed: default failure (code 0)"
    assert one(sites, 7, path).template.text == "no item {path}"
    assert one(sites, 8, path).template.text == "kept as written"


def test_checks_asserts_and_logs():
    sites = mine(
        {
            "A.java": """\
            import java.util.Objects;
            import java.util.logging.Level;
            class A {
                void f(String name, Object value, int n, Exception e) {
                    Objects.requireNonNull(value, "value of " + name + " is required");
                    Preconditions.checkArgument(n > 0, "n must be positive, got %s", n);
                    Preconditions.checkState(n < 9, "too many: %s of %s", n, 9, name);
                    assert n != 3 : "n is " + n;
                    assert n != 4;
                    log.error("cannot load {} after {} tries", name, n, e);
                    LOG.warn("deprecated option {}", name);
                    logger.severe("severe " + name);
                    logger.log(Level.SEVERE, "failed {0} at {1}", new Object[] {name, n});
                    logger.log(Level.WARNING, "warn {0}", name);
                    Log.e(TAG, "android error " + name, e);
                    FLog.w(TAG, "facebook warn");
                    System.err.println("Error: " + name);
                    System.out.println("not an error");
                    log.info("not a site {}", name);
                }
            }
            """
        }
    )
    npe = one(sites, 5)
    assert (npe.error_class, npe.template.text) == (
        "NullPointerException",
        "value of {name} is required",
    )
    assert one(sites, 6).error_class == "IllegalArgumentException"
    assert one(sites, 6).template.text == "n must be positive, got {n}"
    assert one(sites, 7).template.text == "too many: {n} of {9} [{name}]"
    asserted = one(sites, 8)
    assert (asserted.kind, asserted.error_class, asserted.template.text) == (
        SiteKind.ASSERT,
        "AssertionError",
        "n is {n}",
    )
    assert one(sites, 9).form == "empty"
    logged = one(sites, 10)
    assert (logged.kind, logged.error_class, logged.template.text) == (
        SiteKind.LOG,
        "ERROR",
        "cannot load {name} after {n} tries",
    )
    warned = one(sites, 11)
    assert (warned.error_class, warned.severity.value) == ("WARN", "warning")
    assert one(sites, 12).template.text == "severe {name}"
    assert one(sites, 14).template.text == "warn {name}"
    assert (one(sites, 15).error_class, one(sites, 15).template.text) == (
        "ERROR",
        "android error {name}",
    )
    assert one(sites, 16).error_class == "WARN"
    assert one(sites, 17).template.text == "Error: {name}"
    assert not at(sites, 18) and not at(sites, 19)


def test_scopes_of_nested_classes_constructors_and_lambdas():
    sites = mine(
        {
            "A.java": """\
            class Outer {
                Outer() { throw new IllegalStateException("ctor"); }
                static { if (true) throw new IllegalStateException("static"); }
                static class Inner {
                    void run() { Runnable r = () -> { throw new IllegalStateException("l"); }; }
                }
                void anonymous() {
                    new Thread() { public void run() { throw new IllegalStateException("anon"); } };
                }
            }
            """
        }
    )
    assert one(sites, 2).function == "Outer.<init>"
    assert one(sites, 3).function == "Outer.<clinit>"
    assert one(sites, 5).function == "Outer$Inner.run"
    assert one(sites, 8).function == "Outer.run"


def test_string_unescaping_and_format_readers():
    assert unescape(r'"a\nb\t\"q\" \u00e9\101\0 \s\\"') == 'a\nb\t"q" éA\0  \\'
    assert unescape('"""\n    x\n      y\n    """') == "x\n  y\n"
    parts = formatter_parts("%-5s|%2$08.3f|%<x|%%|%n|%s", ["a", "b"])
    assert [(p.text, p.hole, p.style) for p in parts] == [
        ("a", True, "%-5s"),
        ("|", False, ""),
        ("b", True, "%2$08.3f"),
        ("|", False, ""),
        ("b", True, "%<x"),
        ("|%|\n|", False, ""),
        ("b", True, "%s"),
    ]
    parts = message_format_parts("'{0}' is {0}, it''s {1,number,#}", ["a", "b"])
    assert "".join("{" + p.text + "}" if p.hole else p.text for p in parts) == (
        "{0} is {a}, it's {b}"
    )


def test_broken_files_keep_their_valid_sites():
    source = (
        b'class A { void f() { throw new IllegalStateException("ok"); }\n void g( { int = ; }\n'
    )
    result = JavaExtractor().extract(SourceFile("A.java", source))
    assert "ok" in [s.template.text for s in result.sites]


# -- the property: java.util.Formatter, MessageFormat, concatenation --------------------------

PROGRAM = textwrap.dedent(
    """\
    import java.nio.charset.StandardCharsets;
    import java.text.MessageFormat;
    import java.util.Objects;

    public class Cases {
        static final String FIXED = "a constant {0} %s message";

        static class AppException extends RuntimeException {
            AppException(String what, long code) {
                super("app failed: " + what + " (code " + code + ")");
            }
        }

        static void case0(String a, long n) {
            throw new IllegalArgumentException("bad " + a + " and " + n + '!');
        }

        static void case1(String a, String b, String c, long n, double d) {
            throw new IllegalStateException(String.format(
                "[%s] [%5s] [%-4s] %d %05d %x %.2f %% %n%2$s %<s", a, b, c, n, n, n, d));
        }

        static void case2(String a) {
            throw new IllegalStateException("x %s y".formatted(a));
        }

        static void case3(String a, String b) {
            throw new RuntimeException(MessageFormat.format("it''s {0} and '{1}' {1}", a, b));
        }

        static void case4(String a, long n) {
            throw new AppException(a, n);
        }

        static void case5(String a, long n) {
            String msg;
            if (n > 0) {
                msg = "positive " + a;
            } else {
                msg = "other " + a;
            }
            throw new IllegalStateException(msg);
        }

        static void case6(String a) {
            Objects.requireNonNull(null, "value " + a + " is required");
        }

        static void case7(String a) {
            throw new RuntimeException(\"\"\"
                first line
                  indented %s
                end\"\"\".formatted(a));
        }

        static void case8(long n) {
            assert n > 10_000_000 : "too small: " + n;
        }

        static void case9() {
            throw new UnsupportedOperationException(FIXED);
        }

        static String text(String hex) {
            byte[] bytes = new byte[hex.length() / 2];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }

        static void run(int k, String[] f) {
            switch (k) {
                case 0 -> case0(text(f[1]), Long.parseLong(f[2]));
                case 1 -> case1(text(f[1]), text(f[2]), text(f[3]), Long.parseLong(f[4]),
                    Double.parseDouble(f[5]));
                case 2 -> case2(text(f[1]));
                case 3 -> case3(text(f[1]), text(f[2]));
                case 4 -> case4(text(f[1]), Long.parseLong(f[2]));
                case 5 -> case5(text(f[1]), Long.parseLong(f[2]));
                case 6 -> case6(text(f[1]));
                case 7 -> case7(text(f[1]));
                case 8 -> case8(Long.parseLong(f[1]));
                default -> case9();
            }
        }

        public static void main(String[] args) throws Exception {
            java.io.BufferedReader in = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            StringBuilder out = new StringBuilder();
            while ((line = in.readLine()) != null) {
                String[] f = line.split(" ", -1);
                String message = "";
                try {
                    run(Integer.parseInt(f[0]), f);
                } catch (Throwable t) {
                    message = t.getMessage();
                }
                for (byte b : message.getBytes(StandardCharsets.UTF_8)) {
                    out.append(String.format("%02x", b));
                }
                out.append('\\n');
            }
            System.out.print(out);
        }
    }
    """
)

CASES: list[str] = ["si", "sssif", "s", "ss", "si", "si", "s", "s", "i", ""]


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _pad(text: str, width: int, *, left: bool = False) -> str:
    fill = " " * max(0, width - _utf16(text))
    return text + fill if left else fill + text


def _java_double(value: float) -> str:
    """``%.2f`` as java.util.Formatter does it: HALF_UP on the shortest decimal of the double."""
    rounded = Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    text = f"{rounded:.2f}"
    return "-0.00" if text == "0.00" and str(value).startswith("-") else text


def expected(case: int, v: list) -> str:
    """What the Java program's exception says: Java's formatting, reimplemented here."""
    match case:
        case 0:
            return f"bad {v[0]} and {v[1]}!"
        case 1:
            a, b, c, n, d = v
            return (
                f"[{a}] [{_pad(b, 5)}] [{_pad(c, 4, left=True)}] {n} "
                f"{n:05d} "
                f"{format(n & 0xFFFF_FFFF_FFFF_FFFF, 'x')} {_java_double(d)} % \n{b} {b}"
            )
        case 2:
            return f"x {v[0]} y"
        case 3:
            return f"it's {v[0]} and {{1}} {v[1]}"
        case 4:
            return f"app failed: {v[0]} (code {v[1]})"
        case 5:
            return ("positive " if v[1] > 0 else "other ") + v[0]
        case 6:
            return f"value {v[0]} is required"
        case 7:
            return f"first line\n  indented {v[0]}\nend"
        case 8:
            return f"too small: {v[0]}"
        case _:
            return "a constant {0} %s message"


@pytest.fixture(scope="module")
def program_sites() -> dict[int, list[RaiseSite]]:
    sites = mine({"Cases.java": PROGRAM})
    lines = PROGRAM.splitlines()
    by_case: dict[int, list[RaiseSite]] = {}
    for number, text in enumerate(lines, start=1):
        found = re.match(r"    static void case(\d+)", text)
        if found is not None:
            end = next(n for n in range(number, len(lines) + 1) if lines[n - 1] == "    }")
            by_case[int(found[1])] = [s for s in sites if number <= s.line <= end]
    return by_case


def test_every_case_is_mined(program_sites):
    for case in range(len(CASES)):
        assert program_sites[case], case
    assert {s.form for s in program_sites[4]} == {"constructor"}
    assert len(program_sites[5]) == 2
    assert {s.form for s in program_sites[9]} == {"constant"}


@pytest.mark.parametrize("case", range(len(CASES)))
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_java_formatting_matches_the_template(program_sites, case, data):
    values = [data.draw(KINDS[kind]) for kind in CASES[case]]
    check(program_sites[case], expected(case, values), values)


def test_the_real_jvm_agrees(program_sites, tmp_path):
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is not installed: the real-runtime half of the property is skipped")
    source = tmp_path / "Cases.java"
    source.write_text(PROGRAM)
    rng = random.Random(11)
    pools = {
        "s": HOSTILE + ["plain", "with space", "tab\there", "ünïcödé", "x" * 20],
        "i": [0, 1, -1, 42, -999_999, 10**6],
        "f": [0.0, 0.125, 1.005, -2.5e-3, 123456.789, 2.675],
    }
    samples = [
        (case, [rng.choice(pools[k]) for k in kinds])
        for _ in range(25)
        for case, kinds in enumerate(CASES)
    ]
    lines = [
        " ".join(
            [str(case)]
            + [
                v.encode().hex() if k == "s" else repr(v)
                for k, v in zip(CASES[case], values, strict=True)
            ]
        )
        for case, values in samples
    ]
    # One JVM for the whole batch (single-file source launch compiles in memory).
    run = subprocess.run(
        [java, "-ea", str(source)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    outputs = [bytes.fromhex(line).decode() for line in run.stdout.splitlines()]
    assert len(outputs) == len(samples)
    for (case, values), message in zip(samples, outputs, strict=True):
        assert message == expected(case, values), (case, values)
        check(program_sites[case], message, values)


# -- real Java -------------------------------------------------------------------------------

PACKAGES = {"react-native-fs": "2.20.0", "react-native-webview": "11.26.1"}
RNFS = "android/src/main/java/com/rnfs"
WEBVIEW = "android/src/main/java/com/reactnativecommunity/webview"


@pytest.fixture(scope="session")
def java_store(tmp_path_factory):
    roots = {name: npm_package(name, version) for name, version in PACKAGES.items()}
    db = tmp_path_factory.mktemp("java") / "store.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db, languages=("java",)), store)
        reports = {
            name: pipeline.mine(open_source(str(root), repo=f"npm:{name}"))
            for name, root in roots.items()
        }
    return db, reports


KNOWN = [
    (
        "react-native-fs",
        f"{RNFS}/RNFSManager.java",
        81,
        "raise",
        "IORejectionException",
        "EISDIR: illegal operation on a directory, read '{filepath}'",
        "constructor",
    ),
    (
        "react-native-fs",
        f"{RNFS}/RNFSManager.java",
        110,
        "raise",
        "IORejectionException",
        "ENOENT: {ex.getMessage()}, open '{filepath}'",
        "constructor",
    ),
    (
        "react-native-fs",
        f"{RNFS}/RNFSManager.java",
        594,
        "raise",
        "Exception",
        "Failed to copy '{source}' to {destination} ({ex.getLocalizedMessage()})",
        "format",
    ),
    (
        "react-native-fs",
        f"{RNFS}/Downloader.java",
        115,
        "raise",
        "Exception",
        "Download has been aborted",
        "literal",
    ),
    (
        "react-native-webview",
        f"{WEBVIEW}/RNCWebViewModule.java",
        544,
        "raise",
        "IllegalStateException",
        "Tried to use permissions API while not attached to an Activity.",
        "literal",
    ),
    (
        "react-native-webview",
        f"{WEBVIEW}/RNCWebViewManager.java",
        1034,
        "log",
        "WARN",
        "Resource blocked from loading due to SSL error. Blocked URL: {failingUrl}",
        "concat",
    ),
    (
        "react-native-webview",
        f"{WEBVIEW}/RNCWebViewManager.java",
        981,
        "log",
        "ERROR",
        "shouldOverrideUrlLoading was interrupted while waiting for result.",
        "literal",
    ),
]


def test_real_java_is_mined_without_problems(java_store):
    _, reports = java_store
    for name, report in reports.items():
        assert report.problems == [], name
        assert report.records > 0, name


@pytest.mark.parametrize(("package", "path", "line", "kind", "cls", "template", "form"), KNOWN)
def test_known_real_records(java_store, package, path, line, kind, cls, template, form):
    db, _ = java_store
    assert_known(db, f"npm:{package}", path, line, (kind, cls, template, form), "java")


def test_a_real_java_trace_is_explained(java_store):
    db, _ = java_store
    message = "EISDIR: illegal operation on a directory, read '/sdcard/Download'"
    trace = textwrap.dedent(
        f"""\
        Exception in thread "mqt_native_modules" com.rnfs.IORejectionException: {message}
        \tat com.rnfs.RNFSManager.getFileUri(RNFSManager.java:81)
        \tat com.rnfs.RNFSManager.getInputStream(RNFSManager.java:105)
        \tat com.rnfs.RNFSManager.readFile(RNFSManager.java:225)
        \tat java.lang.reflect.Method.invoke(Native Method)
        \tat com.facebook.react.bridge.JavaMethodWrapper.invoke(JavaMethodWrapper.java:372)
        \t... 4 more
        """
    )
    with SQLiteStore(db) as store:
        answer = Explainer.open(store, cache=None).explain(trace)
    best = answer.matches[0]
    assert best.kind is MatchKind.EXACT
    assert (best.record.file_path, best.record.line_number) == (f"{RNFS}/RNFSManager.java", 81)
    assert best.record.error_class == "IORejectionException"
    assert best.captures == {"filepath": "/sdcard/Download"}
    assert any("frame points at the record's line" in e for e in best.evidence)
    assert any("the error class is IORejectionException" in e for e in best.evidence)
