"""Classification (issue #5): accuracy on hand-labelled real sites, then the rules one by one.

The labelled set, ``tests/data/labels.jsonl``, holds one JSON object per site: ``package``,
``version``, ``file``, ``line``, ``class``, ``kind``, ``template`` (``errorMessage`` as errdex
mines it), the labels ``errorType``, ``handlingStrategy``, ``backgroundTag`` and ``severity``, a
one-line ``why``, and ``split`` (``tune`` or ``holdout``).

**Selection rule** (not hand-picked): each package's records, sorted by (file, line, class,
message), are grouped by statement kind; from a kind with ``n`` of the package's ``N`` records,
``q = max(min(n, 2), round(Q * n / N))`` records are taken at positions
``floor((i + 0.5) * n / q)``, ``i < q`` (evenly spaced), with ``Q`` the package's quota:
requests 2.32.3, click 8.1.7, flask 3.0.3, jinja2 3.1.4 and httpx 0.27.2 20 each, django 5.1.4
35, pydantic 2.9.2 25, fastapi 0.115.0 16 and werkzeug 3.0.4 32 (the ``tune`` split, 227
sites), starlette 0.38.6 32 (the ``holdout`` split, 32 sites). A site at the same (file, line,
class) as an earlier pick is skipped. werkzeug was the first held-out package; after it was
measured once (69.7% / 81.8% / 57.6%) its errors guided general rules, so it moved into
``tune`` and starlette, labelled before the classifier ever ran on it, took its place.

**Labels** were written by reading each site's code, not by running the classifier. The
conventions: the category is what a developer would call the error (a ``ValueError`` raised by
an ``isinstance`` check is ``type``; a ``TypeError`` for an unknown colour name is
``validation``); the strategy is what the caller should do (``validation``: check the input
first; ``propagate``: a bug, a wrong call order or a signal, nothing to handle locally;
``fallback``: use another path; ``configuration``: fix settings or the environment; ``retry``;
``install``; ``upgrade``); the root cause uses DESIGN.md's vocabulary plus ``invalid-value``,
``control-flow``, ``unhandled-exception`` and ``error-response`` (see ``errdex.analyze.classify``).
"""

from __future__ import annotations

import errno
import json
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from corpus import unpacked_wheel
from hypothesis import given
from hypothesis import strategies as st

from errdex.analyze.classify import Classification, _wording_words, classify
from errdex.extract.files import SourceFile, open_source
from errdex.extract.python import PythonExtractor
from errdex.models import (
    CodeFacts,
    ErrorRecord,
    ErrorType,
    Guard,
    HandlingStrategy,
    MessageTemplate,
    RaiseSite,
    Severity,
    SiteKind,
    TemplatePart,
)
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.base import SearchQuery
from errdex.store.sqlite import SQLiteStore

DATA = Path(__file__).resolve().parent / "data"
LABELS = DATA / "labels.jsonl"
FIELDS = ("errorType", "handlingStrategy", "backgroundTag")
TARGET = 0.90
HOLDOUT_FLOOR = 0.70  # a regression guard; the figures are printed
CORE_CAUSES = {
    "invalid-enum-value",
    "missing-argument",
    "type-mismatch",
    "out-of-range",
    "shape-mismatch",
    "missing-key",
    "file-not-found",
    "missing-dependency",
    "unsupported-option",
    "not-implemented",
    "invalid-state",
    "conflicting-options",
    "invalid-format",
    "permission-denied",
    "timeout",
    "connection-failure",
    "resource-exhausted",
    "version-mismatch",
    "assertion-violation",
    "empty-input",
    "duplicate-entry",
}
EXTRA_CAUSES = {"invalid-value", "control-flow", "unhandled-exception", "error-response"}


def load_labels() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line]


def site_of(record: ErrorRecord) -> RaiseSite:
    """The site a record was built from (what ``classify`` saw)."""
    return RaiseSite(
        path=record.file_path,
        kind=record.kind,
        error_class=record.error_class,
        template=record.template,
        form=record.message_form,
        line=record.line_number,
        end_line=record.end_line_number or record.line_number,
        message_line=record.message_line,
        message_end_line=record.message_end_line,
        function=record.function,
        function_start=record.function_start,
        function_end=record.function_end,
        severity=record.severity,
        http_status=record.http_status if record.kind is SiteKind.HTTP else None,
        error_code=record.error_code,
        defined_at=record.defined_at,
        i18n=record.i18n,
        source_code=record.source_code,
        source_code_start=record.source_code_start,
        source_code_end=record.source_code_end,
        factory=record.factory,
        arguments=record.arguments,
        facts=record.facts,
    )


def answer(verdict: Classification) -> dict[str, str]:
    return {
        "errorType": verdict.error_type.value,
        "handlingStrategy": verdict.strategy.value,
        "backgroundTag": verdict.background,
    }


# -- the labelled set -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def labels() -> list[dict[str, Any]]:
    return load_labels()


@pytest.fixture(scope="session")
def labelled(
    labels: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[dict[str, Any], ErrorRecord | None]]:
    """Each label with the record mined at its (file, line, class); one store for all packages."""
    # Session-scoped, so the wheels are fetched before the per-test environment moves the cache.
    versions = sorted({(label["package"], label["version"]) for label in labels})
    roots = {name: unpacked_wheel(name, version) for name, version in versions}
    db = tmp_path_factory.mktemp("labelled") / "store.sqlite3"
    found: dict[tuple[str, str, int, str], list[ErrorRecord]] = {}
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        for name, root in roots.items():
            report = pipeline.mine(open_source(str(root), repo=f"pypi:{name}"))
            assert report.problems == [], name
            records, _ = store.search(SearchQuery(repo=f"pypi:{name}", limit=1_000_000))
            for record in records:
                key = (name, record.file_path, record.line_number, record.error_class)
                found.setdefault(key, []).append(record)
    pairs: list[tuple[dict[str, Any], ErrorRecord | None]] = []
    for label in labels:
        candidates = found.get((label["package"], label["file"], label["line"], label["class"]), [])
        exact = [r for r in candidates if r.error_message == label["template"]]
        pairs.append((label, (exact or candidates or [None])[0]))
    return pairs


def report(pairs: list[tuple[dict[str, Any], ErrorRecord | None]], title: str) -> dict[str, float]:
    """Print per-field accuracy and the most frequent confusions; return the accuracies."""
    hits: Counter[str] = Counter()
    confusions: dict[str, Counter[tuple[str, str]]] = {name: Counter() for name in FIELDS}
    for label, record in pairs:
        assert record is not None
        # What a user gets: the verdict stored on the record at mining time.
        got = {
            "errorType": record.error_type.value,
            "handlingStrategy": record.handling_strategy.value,
            "backgroundTag": record.background_tag,
        }
        for name in FIELDS:
            if got[name] == label[name]:
                hits[name] += 1
            else:
                confusions[name][(label[name], got[name])] += 1
    accuracy = {name: hits[name] / len(pairs) for name in FIELDS}
    lines = [f"\n{title}: {len(pairs)} sites"]
    for name in FIELDS:
        worst = ", ".join(
            f"{want}→{got} ×{n}" for (want, got), n in confusions[name].most_common(5)
        )
        lines.append(f"  {name:17} {accuracy[name]:6.1%}   labelled→classified: {worst or '-'}")
    print("\n".join(lines))
    return accuracy


def test_the_labelled_set_is_large_varied_and_in_the_vocabularies(labels):
    tune = [label for label in labels if label["split"] == "tune"]
    assert len(tune) >= 150
    assert len({label["package"] for label in tune}) >= 6
    kinds = Counter(label["kind"] for label in labels)
    assert {"raise", "assert", "log", "warn", "object", "http"} <= set(kinds)
    classes = Counter(label["class"] for label in labels)
    assert len(classes) >= 60
    assert classes["ValueError"] / len(labels) < 0.15
    holdout = {label["package"] for label in labels if label["split"] == "holdout"}
    assert holdout and not holdout & {label["package"] for label in tune}
    for label in labels:
        assert ErrorType(label["errorType"]) and HandlingStrategy(label["handlingStrategy"])
        assert label["backgroundTag"] in CORE_CAUSES | EXTRA_CAUSES, label
        assert Severity(label["severity"]) and label["why"]
    keys = [(label["package"], label["file"], label["line"], label["class"]) for label in labels]
    assert len(keys) == len(set(keys))


@pytest.mark.network
@pytest.mark.slow
def test_every_labelled_site_is_mined_and_its_record_carries_the_verdict(labelled):
    missing = [(label["file"], label["line"]) for label, record in labelled if record is None]
    assert missing == []
    for label, record in labelled:
        assert record is not None
        assert record.background_tag in record.tags
        assert record.error_type.value in record.tags
        assert record.severity.value == label["severity"], label


@pytest.mark.network
@pytest.mark.slow
def test_accuracy_on_the_tuning_set(labelled, capsys):
    pairs = [(label, record) for label, record in labelled if label["split"] == "tune"]
    with capsys.disabled():
        accuracy = report(pairs, "classification, tuning set")
    for name in FIELDS:
        assert accuracy[name] >= TARGET, (name, accuracy[name])


@pytest.mark.network
@pytest.mark.slow
def test_accuracy_on_the_held_out_package(labelled, capsys):
    pairs = [(label, record) for label, record in labelled if label["split"] == "holdout"]
    with capsys.disabled():
        accuracy = report(pairs, "classification, held-out package (starlette 0.38.6)")
    for name in FIELDS:
        assert accuracy[name] >= HOLDOUT_FLOOR, (name, accuracy[name])


# -- the rules --------------------------------------------------------------------------------


def sites_of(source: str, path: str = "pkg/mod.py") -> list[RaiseSite]:
    extractor = PythonExtractor()
    result = extractor.extract(SourceFile(path, textwrap.dedent(source).encode()))
    return extractor.link([result])


def verdict_of(source: str, *, line: int | None = None, path: str = "pkg/mod.py") -> Classification:
    sites = sites_of(source, path)
    if line is not None:
        sites = [site for site in sites if site.line == line]
    assert len(sites) == 1, [(s.line, s.template.text) for s in sites]
    return classify(sites[0])


def triple(verdict: Classification) -> tuple[str, str, str]:
    return verdict.error_type.value, verdict.strategy.value, verdict.background


def bare_site(error_class: str, text: str = "", **fields: Any) -> RaiseSite:
    """A site with no source code: only the class, the message and the given fields."""
    parts = (TemplatePart(text=text),) if text else ()
    values: dict[str, Any] = {"path": "m.py", "kind": SiteKind.RAISE, "form": "constant"}
    values.update(line=1, end_line=1, **fields)
    return RaiseSite(error_class=error_class, template=MessageTemplate(parts=parts), **values)


def test_a_classification_is_a_frozen_value() -> None:
    """Compiled or not, the classifier's answer compares, hashes, pickles and refuses change."""
    import dataclasses
    import pickle

    made = Classification(ErrorType.VALIDATION, HandlingStrategy.VALIDATION, "bad", ("raise",))
    same = Classification(
        error_type=ErrorType.VALIDATION,
        strategy=HandlingStrategy.VALIDATION,
        background="bad",
        tags=("raise",),
        severity=Severity.ERROR,
        evidence="default",
    )
    assert made == same and hash(made) == hash(same)
    assert (made.http_status, made.error_code) == (None, None)
    assert dataclasses.replace(made, background="worse") != made
    assert dataclasses.replace(made, background="worse").background == "worse"
    assert pickle.loads(pickle.dumps(made)) == made
    with pytest.raises(AttributeError):
        made.background = "worse"  # type: ignore[misc]


def test_the_seed_site_is_an_invalid_enum_value(seed):
    record = ErrorRecord.model_validate(seed["record"])
    site = site_of(record).model_copy(update={"kind": SiteKind.RAISE})
    assert triple(classify(site)) == ("validation", "validation", "invalid-enum-value")


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, ("authentication", "configuration")),
        (403, ("permission", "configuration")),
        (404, ("not-found", "validation")),
        (500, ("internal", "propagate")),
    ],
)
def test_http_statuses_decide_the_category(status, expected):
    verdict = verdict_of(
        f"""\
        from fastapi import HTTPException

        def view(item):
            raise HTTPException(status_code={status}, detail="Nope")
        """
    )
    assert (verdict.error_type.value, verdict.strategy.value) == expected
    assert verdict.http_status == status and f"http-{status}" in verdict.tags


@pytest.mark.parametrize(
    ("error_class", "status", "error_type"),
    [
        ("Http404", 404, "not-found"),
        ("NotFound", 404, "not-found"),
        ("BadRequestKeyError", 400, "not-found"),
        ("MethodNotAllowed", 405, "validation"),
        ("RequestEntityTooLarge", 413, "validation"),
        ("PermissionDenied", 403, "permission"),
        ("TemplateNotFound", None, "not-found"),
    ],
)
def test_http_status_implied_by_the_class_name(error_class, status, error_type):
    verdict = classify(bare_site(error_class))
    assert (verdict.http_status, verdict.error_type.value) == (status, error_type)


def test_a_message_that_says_not_authenticated_beats_a_403_status():
    verdict = classify(
        bare_site("HTTPException", "Not authenticated", kind=SiteKind.HTTP, http_status=403)
    )
    assert triple(verdict) == ("authentication", "configuration", "permission-denied")


@pytest.mark.parametrize(
    "call",
    [
        'warnings.warn("f() is deprecated; use g()", DeprecationWarning)',
        'warnings.warn("f() is deprecated; use g()", PendingDeprecationWarning)',
        'warnings.warn("f() will be removed in 6.0", RemovedInDjango60Warning)',
        'warnings.warn("The `parse_obj` method is deprecated", PydanticDeprecatedSince20)',
        'warnings.warn("x will be removed in the next release")',
    ],
)
def test_deprecation_warnings(call):
    verdict = verdict_of(f"import warnings\n\ndef f():\n    {call}\n")
    assert triple(verdict) == ("deprecation", "upgrade", "version-mismatch")
    assert verdict.severity is Severity.WARNING


def test_a_raise_about_an_old_version_is_compatibility():
    verdict = classify(
        bare_site("ImproperlyConfigured", "psycopg version 3.1.8 or newer is required; you have 3")
    )
    assert triple(verdict) == ("compatibility", "upgrade", "version-mismatch")


def test_import_error_means_install_whatever_the_class_or_wording():
    assert triple(classify(bare_site("ImportError", "yaml is needed"))) == (
        "dependency",
        "install",
        "missing-dependency",
    )
    assert triple(classify(bare_site("RuntimeError", "Run `pip install httpx[http2]`"))) == (
        "dependency",
        "install",
        "missing-dependency",
    )
    verdict = verdict_of(
        """\
        def load():
            try:
                import yaml
            except ImportError:
                raise RuntimeError("Cannot load the YAML parser")
        """
    )
    assert triple(verdict) == ("dependency", "install", "missing-dependency")


@pytest.mark.parametrize(
    ("method", "severity"),
    [
        ("error", Severity.ERROR),
        ("exception", Severity.ERROR),
        ("warning", Severity.WARNING),
        ("critical", Severity.CRITICAL),
    ],
)
def test_log_levels_give_the_severity(method, severity):
    verdict = verdict_of(
        f"""\
        import logging
        logger = logging.getLogger(__name__)

        def f(path):
            logger.{method}("Could not find the file %s", path)
        """
    )
    assert verdict.severity is severity
    assert verdict.background == "file-not-found"


def test_a_logged_traceback_is_an_unhandled_exception():
    verdict = verdict_of(
        """\
        import logging
        logger = logging.getLogger(__name__)

        def handle(request, run):
            try:
                return run(request)
            except Exception:
                logger.exception("Request %s crashed", request.path)
        """
    )
    assert triple(verdict) == ("internal", "propagate", "unhandled-exception")


def test_check_objects_get_their_severity_and_are_configuration():
    sites = sites_of(
        """\
        from django.core import checks

        def check(field):
            if field.null and field.primary_key:
                return [checks.Error("Primary keys must not be null.", id="fields.E007")]
            return [checks.Warning("Null has no effect on ManyToManyField.", id="fields.W340")]
        """
    )
    error, warning = sorted(sites, key=lambda s: s.line)
    assert classify(error).severity is Severity.ERROR
    assert classify(error).error_code == "fields.E007"
    assert classify(error).error_type is ErrorType.CONFIGURATION
    assert classify(warning).severity is Severity.WARNING


def test_errno_codes_from_the_call_and_from_the_class():
    verdict = verdict_of(
        """\
        import errno, os

        def read(path):
            raise OSError(errno.ENOENT, "No such file", path)
        """
    )
    assert verdict.error_code == "ENOENT"
    assert classify(bare_site("FileNotFoundError", "gone")).error_code == "ENOENT"
    assert classify(bare_site("PermissionError", "no")).error_code == "EACCES"
    assert (
        classify(bare_site("OSError", "[Errno 13] Permission denied")).error_code
        == (errno.errorcode[13])
    )
    assert classify(bare_site("PydanticCustomError", "sequence_str")).error_code == "sequence_str"
    assert classify(bare_site("ValueError", "bad value")).error_code is None


def test_isinstance_guard_is_a_type_mismatch_even_for_a_value_error():
    verdict = verdict_of(
        """\
        def encode(data):
            if isinstance(data, str):
                raise ValueError("Data must be bytes.")
            return data
        """
    )
    assert triple(verdict) == ("type", "validation", "type-mismatch")


def test_isinstance_fall_through_is_a_type_mismatch():
    verdict = verdict_of(
        """\
        def to_set(v):
            if isinstance(v, set):
                return v
            elif isinstance(v, (list, tuple)):
                return set(v)
            raise SetError()
        """
    )
    assert verdict.background == "type-mismatch"


def test_membership_in_literals_is_an_invalid_enum_value():
    verdict = verdict_of(
        """\
        def open_resource(name, mode="rb"):
            if mode not in {"r", "rt", "rb"}:
                raise ValueError("Resources can only be opened for reading.")
        """
    )
    assert triple(verdict) == ("validation", "validation", "invalid-enum-value")


def test_fall_through_after_literal_comparisons_is_an_invalid_enum_value():
    verdict = verdict_of(
        """\
        def resolve(phase):
            if phase == "decode":
                return 1
            elif phase == "target_verify":
                return 2
            raise ValueError(f"Bad phase {phase}")
        """
    )
    assert triple(verdict) == ("validation", "validation", "invalid-enum-value")


def test_a_parameter_that_is_none_is_a_missing_argument():
    verdict = verdict_of(
        """\
        def connect(host=None):
            if host is None:
                raise ValueError("Cannot connect")
        """
    )
    assert triple(verdict) == ("validation", "validation", "missing-argument")


def test_a_local_that_is_none_is_not_a_missing_argument():
    verdict = verdict_of(
        """\
        def stream(find):
            writer = find()
            if writer is None:
                raise RuntimeError("Was not able to determine the stream")
        """
    )
    assert verdict.background == "invalid-state"


def test_a_comparison_with_a_bound_is_out_of_range():
    verdict = verdict_of(
        """\
        def gen_salt(length):
            if length <= 0:
                raise ValueError("Bad salt length")
        """
    )
    assert triple(verdict) == ("validation", "validation", "out-of-range")


def test_a_length_that_differs_is_a_shape_mismatch():
    verdict = verdict_of(
        """\
        def assign(values, slots):
            if len(values) != len(slots):
                raise ValueError("Cannot assign the values")
        """
    )
    assert verdict.background == "shape-mismatch"


def test_a_failed_dict_lookup_is_a_missing_key():
    verdict = verdict_of(
        """\
        HANDLERS = {}

        def handler(name):
            try:
                return HANDLERS[name]
            except KeyError:
                raise LookupError(f"No handler called {name}") from None
        """
    )
    assert triple(verdict) == ("not-found", "validation", "missing-key")


def test_a_name_missing_from_a_registry_is_a_missing_key():
    verdict = verdict_of(
        """\
        def get(registry, name):
            if name not in registry:
                raise CommandError(f"App {name} has no migrations")
        """
    )
    assert verdict.background == "missing-key"


def test_two_options_given_together_conflict():
    verdict = verdict_of(
        """\
        def option(prompt=None, is_flag=False):
            if prompt and is_flag:
                raise TypeError("'prompt' is not valid for a flag.")
        """
    )
    assert triple(verdict) == ("validation", "validation", "conflicting-options")


def test_a_raise_that_its_own_try_catches_is_control_flow():
    verdict = verdict_of(
        """\
        def root(spec):
            try:
                if spec is None:
                    raise ValueError
            except (ImportError, ValueError):
                return None
        """
    )
    assert triple(verdict) == ("internal", "propagate", "control-flow")
    assert classify(bare_site("CompilerExit")).background == "control-flow"
    assert classify(bare_site("StopIteration")).background == "control-flow"


@pytest.mark.parametrize(
    ("error_class", "text", "expected"),
    [
        ("ValueError", "mode must be one of 'r', 'w'", "invalid-enum-value"),
        ("ValueError", "fields and expressions are mutually exclusive.", "conflicting-options"),
        ("KeyError", "Tag 'x' is already registered.", "duplicate-entry"),
        ("RuntimeError", "Clamping is not supported for open bounds.", "unsupported-option"),
        ("TypeError", "f() got unexpected keyword arguments: x", "unsupported-option"),
        ("ValueError", "URL too long", "out-of-range"),
        ("TypeError", "Object of type X is not JSON serializable", "type-mismatch"),
        ("TypeError", "format_map() takes exactly one argument 2 given", "shape-mismatch"),
        ("RuntimeError", "The environment variable X is not set", "missing-argument"),
        ("OSError", "Could not find the TLS key file, invalid path: x", "file-not-found"),
        ("RuntimeError", "Cannot send a request, as the client has been closed.", "invalid-state"),
        ("AssertionError", "remaining bytes should never go negative", "assertion-violation"),
        ("TemplateSyntaxError", "expected token 'end of statement block'", "invalid-format"),
    ],
)
def test_wording_rules(error_class, text, expected):
    assert classify(bare_site(error_class, text)).background == expected
    # The rules match the lowered text, so the case of the message does not matter.
    assert classify(bare_site(error_class, text.upper())).background == expected


def test_wording_rules_are_written_in_lower_case():
    # They are compiled without re.IGNORECASE and matched against the lowered text (#3): an
    # upper-case letter outside an escape (\S, \W) would never match.
    import re

    from errdex.analyze.classify import _WORDING

    for name, pattern, _, _ in _WORDING:
        assert not pattern.flags & re.IGNORECASE, name
        assert not re.findall(r"(?<!\\)[A-Z]", pattern.pattern.replace("\\\\", "")), name


def test_required_words_are_what_every_match_of_a_pattern_holds():
    import re

    from errdex.analyze.classify import required_words

    assert required_words(re.compile(r"\bfoo (?:a|bc)\b|bar")) == ("foo ", "bar")
    # Alternatives sharing a start: Python's parser takes the start out of the alternation.
    assert required_words(re.compile(r"\bnot (?:ready|open)|\bnot yet")) == ("not ",)
    assert required_words(re.compile(r"\b(?:cannot|must) never\b")) == (" never",)
    assert required_words(re.compile(r"(?:cannot|won't) be")) == ("cannot", "won't")
    assert required_words(re.compile(r"x?(?:abc|de)")) == ("abc", "de")
    # No words: an alternative with no literal text, or case ignored.
    assert required_words(re.compile(r"\w+ing|done")) == ("ing", "done")
    assert required_words(re.compile(r"\w+|done")) is None
    assert required_words(re.compile(r"(?i)done")) is None
    assert required_words(re.compile(r"(?:done)?")) is None


_RULE_WORDS = sorted({word for words in _wording_words() if words for word in words})


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_RULE_WORDS),
            st.sampled_from([" ", "x", "() ", "'", "a ", "is ", "the ", "s ", "\n", "0", "-"]),
        ),
        max_size=12,
    )
)
def test_a_text_without_a_rules_words_never_matches_the_rule(pieces: list[str]) -> None:
    # The words only skip searches that would fail (#3): every match holds one of them.
    from errdex.analyze.classify import _WORDING

    text = "".join(pieces)
    for (name, pattern, _, _), words in zip(_WORDING, _wording_words(), strict=True):
        if words is not None and pattern.search(text):
            assert any(word in text for word in words), (name, text)


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_RULE_WORDS),
            st.text(max_size=4),
            st.sampled_from([" ", "x", "() ", "'", "is ", "the ", "\n", "-", "é"]),
        ),
        max_size=12,
    )
)
def test_the_rules_tried_on_a_text_are_those_whose_words_it_holds(pieces: list[str]) -> None:
    # One automaton finds every rule's words at once; it must pick the rules a substring test
    # of each word picks, no fewer (a rule skipped) and no more.
    from errdex.analyze.classify import _wording_rules

    text = "".join(pieces).lower()
    expected = [
        rule
        for rule, words in enumerate(_wording_words())
        if words is None or any(word in text for word in words)
    ]
    assert _wording_rules(text) == expected


@pytest.mark.parametrize(
    ("error_class", "expected"),
    [
        ("NotImplementedError", ("not-implemented", "fallback", "not-implemented")),
        ("ConnectTimeout", ("timeout", "retry", "timeout")),
        ("ConnectionError", ("network", "retry", "connection-failure")),
        ("TemplateNotFound", ("not-found", "validation", "file-not-found")),
        ("StreamConsumed", ("state", "propagate", "invalid-state")),
        ("ImproperlyConfigured", ("configuration", "configuration", "invalid-value")),
        ("MemoryError", ("resource", "cleanup", "resource-exhausted")),
        ("StrError", ("type", "validation", "type-mismatch")),
        ("AnyStrMaxLengthError", ("validation", "validation", "out-of-range")),
        ("WebSocketRequestValidationError", ("validation", "validation", "invalid-value")),
    ],
)
def test_class_names_without_a_message(error_class, expected):
    assert triple(classify(bare_site(error_class))) == expected


def test_code_facts_are_used_when_present():
    facts = CodeFacts(
        guards=[Guard(kind="isinstance", text="not isinstance(x, int)", subject="x")],
        exception_bases=["ValidationError", "ValueError"],
    )
    site = bare_site("MyCustomThing", "bad x", facts=facts)
    assert classify(site).background == "type-mismatch"
    assert classify(site).error_type is ErrorType.TYPE
    based = bare_site("Oops", "", facts=CodeFacts(exception_bases=["ConnectionError"]))
    assert triple(classify(based)) == ("network", "retry", "connection-failure")
    caught = bare_site("Oops", "it failed", facts=CodeFacts(in_except=True, caught=["KeyError"]))
    assert classify(caught).background == "missing-key"


def test_works_without_source_code_or_facts():
    verdict = classify(bare_site("ValueError", "bad input"))
    assert triple(verdict) == ("validation", "validation", "invalid-value")
    assert verdict.severity is Severity.ERROR and verdict.tags[:2] == ("raise", "validation")


def test_an_unparsable_snippet_falls_back_to_class_and_words():
    site = bare_site("ValueError", "must be one of a, b").model_copy(
        update={"source_code": "    )\n  raise ValueError(x\n(((", "line": 2, "end_line": 2}
    )
    assert classify(site).background == "invalid-enum-value"
