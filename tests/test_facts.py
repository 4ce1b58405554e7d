"""Code facts (#5): what the code around each Python site says, gathered in the mining pass.

The seed site first (its fall-through dispatch, and a variant typed with ``Literal``), then one
snippet per guard shape, the function's header, exception bases, ``except`` blocks, callers
across files through ``Pipeline.mine``, and a whole real package.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import seed_fixture_source
from corpus import unpacked_wheel

from errdex.extract.files import SourceFile, open_source
from errdex.extract.python import PythonExtractor
from errdex.models import CodeFacts, Guard, Location, Parameter, RaiseSite
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.base import SearchQuery
from errdex.store.sqlite import SQLiteStore

PHASES = ["'draft_decode'", "'draft_extend'", "'target_verify'"]
SEED_SIGNATURE = "    spec_algorithm, phase, num_draft_tokens=None, is_draft_worker=False"


def mine(files: dict[str, str]) -> list[RaiseSite]:
    extractor = PythonExtractor()
    results = [
        extractor.extract(SourceFile(path, textwrap.dedent(source).encode()))
        for path, source in files.items()
    ]
    return extractor.link(results)


def facts_at(sites: list[RaiseSite], line: int, path: str | None = None) -> CodeFacts:
    found = [s for s in sites if s.line == line and path in (None, s.path)]
    assert found, [(s.path, s.line) for s in sites]
    assert all(s.facts == found[0].facts for s in found)
    facts = found[0].facts
    assert facts is not None
    return facts


def snippet(source: str) -> list[RaiseSite]:
    return mine({"m.py": source})


def shape(guard: Guard) -> tuple[str, str, str | None, list[str], bool]:
    return (guard.kind, guard.text, guard.subject, guard.values, guard.leads_to_site)


# -- the seed ---------------------------------------------------------------------------------


def seed_site(seed_record: dict, signature: str = SEED_SIGNATURE) -> RaiseSite:
    source = seed_fixture_source(seed_record)
    assert SEED_SIGNATURE in source
    source = source.replace(SEED_SIGNATURE, signature)
    (site,) = mine({"python/sglang/srt/speculative/spec_utils.py": source})
    assert site.line == 124
    return site


def test_the_seed_site_dispatches_on_phase_and_falls_through_to_the_raise(seed):
    facts = seed_site(seed["record"]).facts
    assert facts is not None
    assert facts.function == "resolve_num_tokens_per_req"
    assert facts.class_name is None
    assert facts.signature == (
        "resolve_num_tokens_per_req(spec_algorithm, phase, num_draft_tokens=None, "
        "is_draft_worker=False)"
    )
    assert facts.parameters == [
        Parameter(name="spec_algorithm"),
        Parameter(name="phase"),
        Parameter(name="num_draft_tokens", default="None"),
        Parameter(name="is_draft_worker", default="False"),
    ]
    assert facts.docstring == (
        "Resolve how many tokens each request carries in a speculative phase."
    )
    assert facts.subject == "phase"
    assert facts.accepted_values == PHASES
    assert [shape(g) for g in facts.guards] == [
        ("comparison", f'phase == "{value[1:-1]}"', "phase", [value], False) for value in PHASES
    ]
    assert [g.line for g in facts.guards] == [114, 116, 118]
    assert facts.exception_bases == ["Exception", "BaseException"]
    assert not facts.in_except and facts.caught == []
    assert facts.callers == []


def test_the_seed_site_typed_with_a_literal_gives_the_same_values(seed):
    annotation = 'Literal["draft_decode", "draft_extend", "target_verify"]'
    facts = seed_site(
        seed["record"],
        f"    spec_algorithm, phase: {annotation}, num_draft_tokens=None, is_draft_worker=False",
    ).facts
    assert facts is not None
    assert facts.function == "resolve_num_tokens_per_req"
    assert facts.parameters[1] == Parameter(name="phase", annotation=annotation)
    assert facts.signature == (
        f"resolve_num_tokens_per_req(spec_algorithm, phase: {annotation}, "
        "num_draft_tokens=None, is_draft_worker=False)"
    )
    assert facts.subject == "phase"
    assert facts.accepted_values == PHASES
    assert [(g.kind, g.leads_to_site, g.values) for g in facts.guards] == [
        ("comparison", False, [value]) for value in PHASES
    ]


def test_a_literal_annotation_alone_gives_the_accepted_values():
    sites = snippet(
        """\
        from typing import Literal, Optional

        Mode = Literal["fast", "slow"]

        def run(phase: Optional[Literal["a", "b"]] = None, mode: Mode = "fast"):
            raise ValueError(f"unsupported phase {phase}")

        def walk(mode: Mode):
            raise ValueError(f"unsupported mode {mode}")
        """
    )
    run = facts_at(sites, 6)
    assert run.subject == "phase" and run.guards == []
    assert run.accepted_values == ["'a'", "'b'"]
    assert run.signature == 'run(phase: Optional[Literal["a", "b"]] = None, mode: Mode = "fast")'
    assert facts_at(sites, 9).accepted_values == ["'fast'", "'slow'"]


# -- guard shapes -----------------------------------------------------------------------------


def test_if_elif_else_chain_leads_to_each_branch():
    sites = snippet(
        """\
        def f(kind, n):
            if kind == "a":
                raise ValueError(f"a is retired: {kind}")
            elif n < 0:
                raise ValueError(f"negative {n}")
            else:
                raise ValueError(f"bad {kind}")
        """
    )
    first = facts_at(sites, 3)
    assert [shape(g) for g in first.guards] == [
        ("comparison", 'kind == "a"', "kind", ["'a'"], True)
    ]
    assert first.accepted_values == []  # the site runs for 'a' only
    second = facts_at(sites, 5)
    assert [shape(g) for g in second.guards] == [
        ("comparison", 'kind == "a"', "kind", ["'a'"], False),
        ("comparison", "n < 0", "n", ["0"], True),
    ]
    assert second.subject == "n" and second.accepted_values == []
    third = facts_at(sites, 7)
    assert [(g.text, g.leads_to_site) for g in third.guards] == [
        ('kind == "a"', False),
        ("n < 0", False),
    ]
    # 'a' is handled by a branch that raises: it is rejected, not accepted.
    assert third.subject == "kind" and third.accepted_values == []


def test_elif_chain_that_returns_gives_accepted_values_in_else():
    sites = snippet(
        """\
        def f(mode):
            if mode == "r":
                return 1
            elif mode in ("w", "a"):
                return 2
            else:
                raise ValueError(f"invalid mode: {mode!r}")
        """
    )
    facts = facts_at(sites, 7)
    assert [(g.kind, g.values, g.leads_to_site) for g in facts.guards] == [
        ("comparison", ["'r'"], False),
        ("membership", ["'w'", "'a'"], False),
    ]
    assert facts.subject == "mode"
    assert facts.accepted_values == ["'r'", "'w'", "'a'"]


def test_fall_through_siblings_return_continue_and_elif_chains():
    sites = snippet(
        """\
        def f(items, unit):
            for item in items:
                if item == "skip":
                    continue
                if item == "stop":
                    break
                raise ValueError(f"bad item {item}")
            if unit == "s":
                return 1
            elif unit == "ms":
                return 1000
            if unit == "us":
                x = 1  # does not leave the block: no guard
            raise ValueError(f"unknown unit {unit}")
        """
    )
    loop = facts_at(sites, 7)
    assert [(g.text, g.leads_to_site) for g in loop.guards] == [
        ('item == "skip"', False),
        ('item == "stop"', False),
    ]
    assert loop.accepted_values == ["'skip'", "'stop'"]
    after = facts_at(sites, 14)
    # The loop's guards end with the loop body; the elif of a returning chain is one too.
    assert [(g.text, g.leads_to_site) for g in after.guards] == [
        ('unit == "s"', False),
        ('unit == "ms"', False),
    ]
    assert after.subject == "unit" and after.accepted_values == ["'s'", "'ms'"]


def test_match_cases_and_the_wildcard_fall_through():
    sites = snippet(
        """\
        def f(command, point):
            match command:
                case "go" | "run":
                    return 1
                case "stop":
                    raise RuntimeError(f"stopping on {command}")
                case _:
                    raise ValueError(f"unknown command {command}")

        def g(command):
            match command:
                case "a":
                    return 1
                case "b":
                    return 2
            raise ValueError(f"unknown command {command}")
        """
    )
    stop = facts_at(sites, 6)
    assert [shape(g) for g in stop.guards] == [
        ("match", "command in ('go', 'run')", "command", ["'go'", "'run'"], False),
        ("match", "command == 'stop'", "command", ["'stop'"], True),
    ]
    assert stop.accepted_values == []  # reached for 'stop' only
    other = facts_at(sites, 8)
    assert [g.leads_to_site for g in other.guards] == [False, False]
    assert other.accepted_values == ["'go'", "'run'"]  # 'stop' raises: not accepted
    after = facts_at(sites, 16)
    assert [g.values for g in after.guards] == [["'a'"], ["'b'"]]
    assert after.accepted_values == ["'a'", "'b'"]


def test_early_return_none_check_and_isinstance():
    sites = snippet(
        """\
        def f(value, limit=None):
            if value is None:
                return None
            if limit is not None and not isinstance(limit, (int, float)):
                raise TypeError(f"limit must be a number, not {type(limit).__name__}")
            if not isinstance(value, str):
                raise TypeError(f"expected str, got {value!r}")
        """
    )
    limit = facts_at(sites, 5)
    assert [shape(g) for g in limit.guards] == [
        ("none-check", "value is None", "value", ["None"], False),
        ("none-check", "limit is not None", "limit", ["None"], True),
        ("isinstance", "not isinstance(limit, (int, float))", "limit", ["int", "float"], True),
    ]
    assert limit.subject == "limit"
    value = facts_at(sites, 7)
    assert value.guards[-1].kind == "isinstance" and value.guards[-1].values == ["str"]
    assert value.guards[1].text == "limit is not None and not isinstance(limit, (int, float))"
    assert value.guards[1].leads_to_site is False and value.guards[1].subject == "limit"
    assert value.subject == "value" and value.accepted_values == []


def test_membership_in_literal_module_class_local_and_enum_containers():
    sites = snippet(
        """\
        import enum

        BACKENDS = ("nccl", "gloo")
        ALIASES = {"cuda": "nccl", **{"cpu": "gloo"}}

        class Color(enum.Enum):
            RED = "red"
            GREEN = "green"

        class Engine:
            DEVICES = frozenset({"gpu", "cpu"})

            def run(self, backend, device, alias, color, name, level, member):
                if backend not in BACKENDS:
                    raise ValueError(f"unknown backend {backend}")
                if device.lower() not in self.DEVICES:
                    raise ValueError(f"unknown device {device}")
                if alias not in ALIASES.keys():
                    raise KeyError(alias)
                if color not in {c.value for c in Color}:
                    raise ValueError(f"bad color {color}")
                if name not in Color.__members__:
                    raise ValueError(f"bad color name {name}")
                levels = ["low", "high"]
                if level not in levels:
                    raise ValueError(f"bad level {level}")
                if member not in Color:
                    raise ValueError(member)
        """
    )
    expected = {
        15: ("backend", ["'nccl'", "'gloo'"]),
        17: ("device", ["'gpu'", "'cpu'"]),
        19: ("alias", ["'cuda'", "'cpu'"]),
        21: ("color", ["'red'", "'green'"]),
        23: ("name", ["'RED'", "'GREEN'"]),
        26: ("level", ["'low'", "'high'"]),
        28: ("member", ["Color.RED", "Color.GREEN"]),
    }
    for line, (subject, values) in expected.items():
        facts = facts_at(sites, line)
        assert facts.subject == subject, line
        assert facts.guards[-1].kind == "membership", line
        assert facts.guards[-1].values == values, line
        assert facts.accepted_values == values, line
    assert facts_at(sites, 15).class_name == "Engine"


def test_membership_that_leads_to_the_site_rejects_values():
    sites = snippet(
        """\
        RESERVED = {"con", "nul"}

        def f(name):
            if name in RESERVED:
                raise ValueError(f"reserved name {name}")
        """
    )
    facts = facts_at(sites, 5)
    assert shape(facts.guards[0]) == (
        "membership",
        "name in RESERVED",
        "name",
        ["'con'", "'nul'"],
        True,
    )
    assert facts.accepted_values == []


def test_comparisons_truthiness_and_boolean_operators():
    sites = snippet(
        """\
        def f(items, size, flag):
            if not items:
                raise ValueError("no items")
            if len(items) > size and size > 0:
                raise ValueError(f"too many items: {len(items)}")
            if not (flag == "on" or flag == "off"):
                raise ValueError(f"bad flag {flag}")
            if 0 <= size < 10 or items[0].startswith("_"):
                raise ValueError(f"odd size {size}")
        """
    )
    assert [shape(g) for g in facts_at(sites, 3).guards] == [
        ("truthiness", "not items", "items", [], True)
    ]
    too_many = facts_at(sites, 5)
    assert [shape(g) for g in too_many.guards[1:]] == [
        ("comparison", "len(items) > size", "items", [], True),
        ("comparison", "size > 0", "size", ["0"], True),
    ]
    assert too_many.subject == "items" and too_many.accepted_values == []
    flag = facts_at(sites, 7)
    # ``not (a or b)`` leading to the site: both comparisons fail there.
    assert [shape(g) for g in flag.guards[-2:]] == [
        ("comparison", 'flag == "on"', "flag", ["'on'"], False),
        ("comparison", 'flag == "off"', "flag", ["'off'"], False),
    ]
    assert flag.accepted_values == ["'on'", "'off'"]
    odd = facts_at(sites, 9)
    assert odd.guards[-1].kind == "other" and odd.guards[-1].leads_to_site
    assert odd.guards[-1].text == '0 <= size < 10 or items[0].startswith("_")'


def test_failed_dict_lookups_and_enum_calls():
    sites = snippet(
        """\
        import enum

        CODECS = {"gzip": 1, "zstd": 2}

        class Mode(enum.Enum):
            READ = "r"
            WRITE = "w"

        def f(name, mode, key):
            try:
                codec = CODECS[name]
            except KeyError:
                raise ValueError(f"unknown codec {name}") from None
            try:
                return Mode(mode)
            except ValueError as error:
                raise ValueError(f"unknown mode {mode}") from error
            try:
                value = registry.pop(key)
            except (KeyError, TypeError):
                raise LookupError(key)
        """
    )
    codec = facts_at(sites, 13)
    assert [shape(g) for g in codec.guards] == [
        ("dict-lookup", "CODECS[name]", "name", ["'gzip'", "'zstd'"], True)
    ]
    assert codec.in_except and codec.caught == ["KeyError"]
    assert codec.subject == "name" and codec.accepted_values == ["'gzip'", "'zstd'"]
    mode = facts_at(sites, 17)
    assert shape(mode.guards[-1]) == ("dict-lookup", "Mode(mode)", "mode", ["'r'", "'w'"], True)
    assert mode.accepted_values == ["'r'", "'w'"] and mode.caught == ["ValueError"]
    popped = facts_at(sites, 21)
    assert shape(popped.guards[-1]) == ("dict-lookup", "registry.pop(key)", "key", [], True)
    assert popped.caught == ["KeyError", "TypeError"] and popped.accepted_values == []


def test_asserts_guard_their_own_condition():
    sites = snippet(
        """\
        def f(dtype):
            assert dtype in ("fp16", "bf16"), f"unsupported dtype {dtype}"
        """
    )
    facts = facts_at(sites, 2)
    assert [shape(g) for g in facts.guards] == [
        ("membership", 'dtype in ("fp16", "bf16")', "dtype", ["'fp16'", "'bf16'"], False)
    ]
    assert facts.accepted_values == ["'fp16'", "'bf16'"]


def test_a_check_on_the_type_or_size_drops_values_that_earlier_branches_handle():
    sites = snippet(
        """\
        def f(value):
            if value == "":
                return ""
            if not isinstance(value, str):
                raise TypeError(f"expected str, got {value!r}")
        """
    )
    assert facts_at(sites, 5).accepted_values == []


def test_guards_outside_a_function_do_not_lead_into_it():
    sites = snippet(
        """\
        import sys

        if sys.version_info < (3, 8):
            def f(x):
                raise RuntimeError(f"old python {x}")
        else:
            try:
                import fast
            except ImportError:
                def f(x):
                    raise RuntimeError(f"no fast {x}")
        """
    )
    for line in (5, 11):
        facts = facts_at(sites, line)
        assert facts.guards == [] and not facts.in_except, line


# -- the function, the class, the except block --------------------------------------------------


def test_the_signature_keeps_every_parameter_kind_and_the_docstring_its_first_paragraph():
    sites = snippet(
        '''\
        class Store:
            def put(self, key: str, /, value, *args: int, mode="w", timeout: float = 1.5,
                    **options):
                """Put a value
                under a key.

                Details nobody needs here.
                """
                raise NotImplementedError(key)

            def get(self, key, *, default=None):
                raise KeyError(key)
        '''
    )
    put = facts_at(sites, 9)
    assert put.function == "put" and put.class_name == "Store"
    assert put.signature == (
        'put(self, key: str, /, value, *args: int, mode="w", timeout: float = 1.5, **options)'
    )
    assert [p.name for p in put.parameters] == [
        "self",
        "key",
        "/",
        "value",
        "*args",
        "mode",
        "timeout",
        "**options",
    ]
    assert put.parameters[5] == Parameter(name="mode", default='"w"')
    assert put.docstring == "Put a value under a key."
    assert put.exception_bases == ["RuntimeError", "Exception", "BaseException"]
    get = facts_at(sites, 12)
    assert get.signature == "get(self, key, *, default=None)"
    assert get.docstring is None
    assert get.subject == "key"  # no guard: the parameter the message shows


def test_except_blocks_name_what_they_catch():
    sites = snippet(
        """\
        import json

        def load(text):
            try:
                return json.loads(text)
            except (ValueError, json.JSONDecodeError) as error:
                raise RuntimeError(f"bad json: {error}") from error
            except:
                raise RuntimeError("anything")
            finally:
                pass
        """
    )
    facts = facts_at(sites, 7)
    assert facts.in_except and facts.caught == ["ValueError", "json.JSONDecodeError"]
    bare = facts_at(sites, 9)
    assert bare.in_except and bare.caught == []


def test_exception_bases_from_the_file_the_builtins_and_other_files():
    sites = mine(
        {
            "pkg/errors.py": """\
            class Base(Exception):
                pass

            class ConfigError(Base, ValueError):
                pass
            """,
            "pkg/use.py": """\
            from .errors import ConfigError
            from .errors import Base as ConnectionError

            class Local(ConfigError):
                pass

            def f(x):
                if x:
                    raise Local(x)
                if x is None:
                    raise ConfigError(x)
                if x == 0:
                    raise ConnectionError(x)
                raise UnicodeDecodeError("utf-8", b"", 0, 1, "bad")
            """,
        }
    )
    use = "pkg/use.py"
    assert facts_at(sites, 9, use).exception_bases == [
        "ConfigError",
        "Base",
        "ValueError",
        "Exception",
        "BaseException",
    ]
    assert facts_at(sites, 11, use).exception_bases == [
        "Base",
        "ValueError",
        "Exception",
        "BaseException",
    ]
    # ``ConnectionError`` here is the package's own class, not the builtin.
    assert facts_at(sites, 13, use).exception_bases == ["Exception", "BaseException"]
    assert facts_at(sites, 14, use).exception_bases == [
        "UnicodeError",
        "ValueError",
        "Exception",
        "BaseException",
    ]


def test_log_sites_have_no_bases_and_warnings_have_theirs():
    sites = snippet(
        """\
        import logging
        import warnings
        logger = logging.getLogger(__name__)

        def f(x):
            if x:
                logger.error("failed %s", x)
            warnings.warn("old", DeprecationWarning)
        """
    )
    log = facts_at(sites, 7)
    assert log.exception_bases == [] and log.subject == "x"
    assert facts_at(sites, 8).exception_bases == ["Warning", "Exception", "BaseException"]


# -- callers, through the pipeline ------------------------------------------------------------


def test_callers_across_files_through_pipeline_mine(tmp_path: Path):
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(
        textwrap.dedent(
            """\
            class Loader:
                def __init__(self, path):
                    if not path:
                        raise ValueError("a path is required")
                    self.path = path

                def load(self, fmt):
                    if fmt not in ("json", "yaml"):
                        raise ValueError(f"unknown format {fmt}")

            def resolve(name):
                raise KeyError(name)

            def helper():
                return resolve("x")
            """
        )
    )
    (root / "pkg" / "cli.py").write_text(
        textwrap.dedent(
            """\
            from .core import Loader, resolve

            def main(argv):
                loader = Loader(argv[0])
                loader.load("json")
                value = resolve(argv[1])
                for _ in range(20):
                    resolve("again")
                return value
            """
        )
    )
    db = tmp_path / "store.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        report = pipeline.mine(open_source(str(root), repo="local/project"))
        assert report.problems == []
        records, _ = store.search(SearchQuery(repo="local/project", limit=100))
    by_line = {(r.file_path, r.line_number): r.facts for r in records}
    init = by_line[("pkg/core.py", 4)]
    assert init is not None and init.function == "__init__" and init.class_name == "Loader"
    assert init.callers == [Location(path="pkg/cli.py", line=4)]
    load = by_line[("pkg/core.py", 9)]
    assert load is not None and load.callers == [Location(path="pkg/cli.py", line=5)]
    assert load.accepted_values == ["'json'", "'yaml'"]
    resolve = by_line[("pkg/core.py", 12)]
    assert resolve is not None
    # One location per call (however often it runs), in file order.
    assert resolve.callers == [
        Location(path="pkg/cli.py", line=6),
        Location(path="pkg/cli.py", line=8),
        Location(path="pkg/core.py", line=15),
    ]


def test_callers_are_capped_and_dunder_methods_have_none():
    calls = "\n".join(f"    check({n})" for n in range(12))
    sites = mine(
        {
            "a.py": """\
            def check(n):
                raise ValueError(f"bad {n}")

            class Box:
                def __len__(self):
                    raise TypeError("no length")
            """,
            "b.py": f"def main():\n{calls}\n    len(Box())\n",
        }
    )
    check = facts_at(sites, 2, "a.py")
    assert check.callers == [Location(path="b.py", line=line) for line in range(2, 12)]
    assert facts_at(sites, 6, "a.py").callers == []


# -- a whole real package -----------------------------------------------------------------------


@pytest.mark.network
@pytest.mark.slow
def test_facts_on_a_whole_real_package(tmp_path: Path):
    root = unpacked_wheel("click", "8.1.7")
    db = tmp_path / "store.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db, strict=True), store)  # a crash would raise
        report = pipeline.mine(open_source(str(root), repo="pypi:click"))
        assert report.problems == []
        records, total = store.search(SearchQuery(repo="pypi:click", limit=100_000))
    assert total == len(records) > 100
    assert all(r.facts is not None for r in records)
    facts = [r.facts for r in records if r.facts is not None]
    with_values = [f for f in facts if f.accepted_values]
    assert len(with_values) / len(facts) >= 0.02
    assert sum(1 for f in facts if f.guards) / len(facts) >= 0.7
    assert sum(1 for f in facts if f.function) / len(facts) >= 0.95
    assert sum(1 for f in facts if f.callers) / len(facts) >= 0.5
    assert all(r.facts.exception_bases for r in records if r.facts and r.kind.value == "raise")
    # click/parser.py: ``Option.process`` dispatches on ``self.action`` and raises at the end.
    (action,) = [
        r.facts
        for r in records
        if r.file_path == "click/parser.py" and r.error_message.startswith("unknown action")
    ]
    assert action is not None and action.subject == "self.action"
    assert action.accepted_values == [
        "'store'",
        "'store_const'",
        "'append'",
        "'append_const'",
        "'count'",
    ]
    # Facts stay compact: a bounded number of guards, values and callers per record.
    assert max(len(f.guards) for f in facts) <= 16
    assert max(len(f.callers) for f in facts) <= 10
