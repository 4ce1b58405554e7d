import json
import re
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errdex.match.compile import (
    CompiledTemplate,
    bounded_words,
    compile_template,
    match_cut,
    normalize_space,
)
from errdex.match.engines import AhoCorasickEngine
from errdex.match.index import (
    HEAD_LENGTHS,
    SPECIFIC,
    _head_start,
    _tail_end,
    build_index,
    candidate_keys,
    load_index,
    save_index,
    template_tail,
)
from errdex.match.scan import Scanner, mask
from errdex.models import MessageTemplate, TemplatePart


def template(*parts):
    return MessageTemplate(
        parts=tuple(
            TemplatePart(text=p[1:-1], hole=True) if p.startswith("{") else TemplatePart(text=p)
            for p in parts
        )
    )


def row(rowid, parts, cls="ValueError", path="pkg/mod.py", line=10, end=None):
    data = [[p[1:-1], True] if p.startswith("{") else [p, False] for p in parts]
    return (rowid, cls, path, line, end or line, "raise", json.dumps(data))


@pytest.mark.parametrize(
    ("parts", "message", "captures"),
    [
        (["Unknown phase: ", "{phase}"], "Unknown phase: draft", ("draft",)),
        (["Unknown phase: ", "{phase}"], "Unknown phase: ", ("",)),
        (["{a}", " and ", "{b}"], "x and y and z", ("x", "y and z")),
        (["bad ", "{x}", " in ", "{y}", "."], "bad  in  in .", ("", " in ")),
        (["no holes"], "no holes", ()),
        (["{msg}"], "anything\nat all", ("anything\nat all",)),
    ],
)
def test_compiled_templates_full_match_with_lazy_captures(parts, message, captures):
    assert compile_template(template(*parts)).match(message) == captures


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (["Unknown phase: ", "{phase}"], "Unknown stage: draft"),
        (["a", "{x}", "a"], "a"),
        (["no holes"], "no holes!"),
        (["x ", "{v}", " y"], "x 1 y trailing"),
    ],
)
def test_compiled_templates_reject_other_messages(parts, message):
    assert compile_template(template(*parts)).match(message) is None


@given(
    literals=st.lists(st.text(min_size=0, max_size=8), min_size=1, max_size=5),
    values=st.lists(st.text(max_size=10), min_size=4, max_size=4),
)
def test_any_rendering_matches_its_template(literals, values):
    parts = []
    for index, literal in enumerate(literals):
        if index:
            parts.append(TemplatePart(text=f"h{index}", hole=True))
        if literal:
            parts.append(TemplatePart(text=literal))
    compiled = compile_template(MessageTemplate(parts=tuple(parts)))
    message = "".join(values[int(p.text[1:]) - 1] if p.hole else p.text for p in parts)
    assert compiled.match(message) is not None


@given(
    literals=st.lists(
        st.text(alphabet=st.sampled_from("ab :\n\t\x1c\u3000é"), max_size=8),
        min_size=1,
        max_size=5,
    ),
    values=st.lists(st.text(alphabet=st.sampled_from("ab :\n é"), max_size=6), min_size=4),
)
def test_a_message_splits_into_every_bounded_word_of_its_template(literals, values):
    # What finds a template without a head, and the interpreter's messages, in a dictionary.
    message = "".join(
        literal + (values[number] if number < len(literals) - 1 else "")
        for number, literal in enumerate(literals)
    )
    words = message.split()
    assert all(word in words for word in bounded_words(tuple(literals)))


@pytest.mark.parametrize(
    ("literals", "words"),
    [
        (("", " is not a valid ", ""), ["is", "not", "a", "valid"]),
        (("Invalid value: ", ""), ["Invalid", "value:"]),
        (("Invalid", ""), []),
        (("", "._contains"), []),
        (("", " x\n"), ["x"]),
        (("no holes",), ["no", "holes"]),
    ],
)
def test_a_word_beside_a_hole_is_not_bounded(literals, words):
    assert bounded_words(literals) == words


def test_every_head_a_message_begins_with_finds_its_templates():
    # Heads of each length begin the message; the longest is looked up, the others follow.
    parts = [
        ["Invalid value for parameter ", "{x}"],
        ["Invalid value ", "{x}"],
        ["Invalid ", "{x}"],
        ["Inval", "{x}"],
        ["Inv", "{x}"],
        ["I", "{x}", " parameter x"],
        ["Invalid key ", "{x}"],
    ]
    index = build_index([row(n + 1, p) for n, p in enumerate(parts)], version="v")
    message = "Invalid value for parameter x"
    found = index.verify(index.candidates(message, anchored=True), message)
    assert sorted(template for template, _, _ in found) == [0, 1, 2, 3, 4, 5]
    assert sorted(index.candidates("Invalid key y", anchored=True)) == [2, 3, 4, 6]


def test_templates_that_begin_with_a_hole_come_only_when_their_tail_ends_the_message():
    index = build_index(
        [
            row(1, ["{a}", " not found"]),  # filed under "found" (the rarer word)
            row(2, ["{a}", " not found", "{b}", "."]),  # under "not": "found" meets a hole
            row(3, ["{cls}", "._contains"]),  # no word of its own: found by its key
            row(4, ["{cls}", "._other"]),
        ],
        version="v",
    )
    # "x not found" holds the word of both; only the first ends as the message does.
    assert index.candidates("x not found", anchored=True) == [0]
    assert index.candidates("x not found y.", anchored=True) == [1]
    assert index.candidates("Foo._contains", anchored=True) == [2]
    assert index.candidates("Foo._contains and more", anchored=True) == []


@pytest.mark.parametrize("decoys", [0, 20])
def test_an_engine_of_few_keys_finds_what_an_automaton_finds(decoys):
    keys = ["phase", "ünïcode", "a b", *(f"never{n}" for n in range(decoys))]
    engine = AhoCorasickEngine(keys, offset=5)
    assert sorted(set(engine.buckets("phase a b ünïcode phase"))) == [5, 6, 7]
    assert engine.buckets("nothing") == []
    assert engine.buckets("") == []


def test_hostile_input_is_linear():
    compiled = compile_template(template("a", "{x}", "a", "{y}", "b", "{z}", "a"))
    hostile = "a" * 100_000 + "!"
    started = time.process_time()
    for _ in range(100):
        assert compiled.match(hostile) is None
    assert time.process_time() - started < 1.0


def test_keys_need_three_letters_and_prefer_rare_windows():
    assert candidate_keys(["{}: ", " is "]) == []
    assert candidate_keys(["abc"]) == ["abc"]
    long = "x" * 10 + "distinctive words here" + "y" * 10
    keys = candidate_keys([long])
    assert all(len(key) <= 16 for key in keys) and len(keys) == 3


def test_index_finds_templates_through_the_prefilter_and_groups_identical_ones():
    index = build_index(
        [
            row(1, ["Unknown speculative phase: ", "{phase}"]),
            row(2, ["Unknown speculative phase: ", "{phase}"], path="other/mod.py"),
            row(3, ["Cannot open file ", "{path}", " for reading"]),
            row(4, ["{msg}"]),
            row(5, ["{a}", ": ", "{b}"]),
        ],
        version="v1",
    )
    assert index.template_count == 4
    assert [index.is_generic(t) for t in range(4)] == [False, False, True, True]
    found = list(index.candidates("Unknown speculative phase: draft"))
    assert found == [0]
    assert list(index.records_of(0)) == [0, 1]
    assert list(index.records_of(0, 1)) == [0]
    assert list(index.candidates("nothing to see")) == []
    assert index.records_in_file("/usr/lib/python3/site-packages/other/mod.py") == [1]
    assert index.records_in_file("C:\\venv\\Lib\\site-packages\\pkg\\mod.py") == [0, 2, 3, 4]
    assert index.records_in_file("/x/notpkg/mod.py") == []


def test_inside_a_line_only_specific_templates_are_looked_for():
    index = build_index(
        [
            row(1, ["request ", "{x}", " handled"]),  # 16 literal characters
            row(2, ["request ", "{x}"]),  # 8: found only as a whole message
        ],
        version="v",
    )
    line = "12:00:01 INFO app: request 7 handled"
    assert index.candidates(line) == [0]
    assert index.find_in(line) == [(0, ("7",))]
    assert index.find_in("12:00:01 INFO app: request 7") == []
    assert index.candidates("request 7", anchored=True) == [1]


def test_a_message_shorter_than_its_template_matches_only_when_rewrapped():
    # Verification skips templates with more literal text than the message has, except that
    # a re-wrapped paste may have shrunk the template's own whitespace runs.
    index = build_index(
        [
            row(1, ["Could not load the model weights:\n            ", "{path}"]),
            row(2, ["Bad ", "{x}", " here"]),
        ],
        version="v1",
    )
    message = "Could not load the model weights: a.bin"
    assert len(message) < index.literal_length(0)
    found = index.verify(index.candidates(message, anchored=True), message)
    assert found == [(0, ("a.bin",), True)]
    # A message exactly as long as the literal text (every hole empty) is still tried.
    assert index.verify([1], "Bad  here") == [(1, ("",), False)]
    assert index.verify([1], "Bad here") == []


def test_index_cache_round_trip_and_staleness(tmp_path):
    index = build_index([row(1, ["Cannot open file ", "{path}"])], version="s:1")
    path = tmp_path / "x.matcher"
    save_index(index, path)
    loaded = load_index(path, version="s:1")
    assert loaded is not None and list(loaded.candidates("Cannot open file /etc")) == [0]
    assert load_index(path, version="s:2") is None
    path.write_bytes(b"garbage")
    assert load_index(path, version="s:1") is None
    assert load_index(tmp_path / "missing", version="s:1") is None


def test_building_the_index_pauses_the_cyclic_collector():
    # A build makes millions of lasting objects at a million records: full collections walked
    # them again and again (5 s of a 54 s build), freeing nothing.
    import gc

    seen: list[bool] = []

    def rows():
        seen.append(gc.isenabled())
        yield row(1, ["Cannot open file ", "{path}"])

    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            index = build_index(rows(), version="s:1")
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
        assert list(index.candidates("Cannot open file /etc")) == [0]
    assert seen == [False, False]


def test_scan_groups_known_and_unknown_error_lines():
    index = build_index(
        [
            row(1, ["Cannot open file ", "{path}", " for reading"]),
            row(2, ["Worker ", "{n}", " died unexpectedly"], cls="ERROR"),
        ],
        version="v",
    )
    lines = [
        "2026-12-02 10:00:00,001 INFO started",
        "2026-12-02 10:00:01,002 ERROR io: Cannot open file /tmp/a for reading",
        "Traceback (most recent call last):",
        '  File "x.py", line 3, in <module>',
        "OSError: Cannot open file /tmp/b for reading",
        "2026-12-02 10:00:05,000 ERROR pool: Worker 7 died unexpectedly",
        "2026-12-02 10:00:06,000 ERROR db: connection 1234 failed after 3 retries",
        "2026-12-02 10:00:07,000 ERROR db: connection 99 failed after 5 retries",
        "2026-12-02 10:00:08,000 ERROR io: Cannot open file /tmp/c for reading",
    ]
    report = Scanner(index).scan(lines)
    assert report.lines == 9 and report.matched == 4 and report.unmatched == 2
    first = report.groups[0]
    assert first.count == 3 and first.rowids == [1]
    assert (
        first.first_seen == "2026-12-02 10:00:01,002"
        and first.last_seen == "2026-12-02 10:00:08,000"
    )
    assert first.captures == ("/tmp/a",)
    assert report.unknown[0].count == 2
    assert "connection <n> failed" in report.unknown[0].key


@given(
    st.lists(
        st.sampled_from(["ERROR", "Error", "error", "WARNING", "Exception", "failed", "Panic"])
        | st.sampled_from(["CRITICAL", "FATAL", "WARN", " ", ":", "x", "_", "é", "-"])
        | st.text(max_size=6),
        max_size=8,
    )
)
def test_a_line_that_looks_like_an_error_holds_one_of_the_hint_words(pieces):
    # The scan runs the word-bounded pattern only on lines the plain hint search finds.
    from errdex.match.scan import _ERROR_HINT, _ERROR_LOOKING

    line = "".join(pieces)
    if _ERROR_LOOKING.search(line):
        assert _ERROR_HINT.search(line)


def test_scan_does_not_group_lines_by_templates_with_almost_no_text():
    # "request {x}" would claim every line that ends with "request …".
    index = build_index(
        [row(1, ["request ", "{x}"]), row(2, ["Worker ", "{n}", " died unexpectedly"])],
        version="v",
    )
    lines = [
        "2026-12-02 10:00:00,001 INFO app: handled request 12 in 0.1s",
        "2026-12-02 10:00:01,002 ERROR app: failed request 13",
        "2026-12-02 10:00:02,003 ERROR pool: Worker 7 died unexpectedly",
    ]
    report = Scanner(index).scan(lines)
    assert report.matched == 1 and report.groups[0].rowids == [2]
    assert report.unmatched == 1 and "failed request" in report.unknown[0].key


def test_scan_reads_an_exception_repr_at_the_end_of_a_line():
    index = build_index(
        [row(1, ["Unknown speculative phase: ", "{phase}"]), row(2, ["Missing command."])],
        version="v",
    )
    lines = [
        "2026-12-02 10:00:00 ERROR worker: failed: ValueError('Unknown speculative phase: a')",
        'Task run[1f] raised unexpected: ValueError("Unknown speculative phase: b")',
        "2026-12-02 10:00:02 ERROR cli: UsageError('Missing command.')",
        "2026-12-02 10:00:03 ERROR cli: not a repr('Missing command.')",
    ]
    report = Scanner(index).scan(lines)
    groups = {g.rowids[0]: g for g in report.groups}
    assert groups[1].count == 2 and groups[1].captures == ("a",)  # no quote or bracket
    assert groups[2].count == 1 and report.unmatched == 1


def test_scan_prefers_the_log_calls_template_when_it_says_more_than_the_reprs():
    index = build_index(
        [
            row(1, ["Failed to sync account ", "{acct}", " with upstream server: ", "{exc}"]),
            row(2, ["Connection refused by ", "{host}"]),
        ],
        version="v",
    )
    line = (
        "2026-12-02 10:00:00 ERROR sync: Failed to sync account 42 with upstream server:"
        " UpstreamError('Connection refused by db1')"
    )
    report = Scanner(index).scan([line])
    assert [g.rowids for g in report.groups] == [[1]]


def test_mask_hides_variable_parts():
    assert mask("id 0xdeadbeef took 12.5 ms for 'abc'") == "id <hex> took <n> ms for <str>"


@pytest.mark.parametrize("engine", ["aho-corasick", "hyperscan"])
def test_both_engines_give_the_same_candidates_and_scans(engine, tmp_path):
    rows = [
        row(1, ["Unknown speculative phase: ", "{phase}"]),
        row(2, ["Cannot open file ", "{path}", " for reading"]),
        row(3, ["Worker ", "{n}", " died unexpectedly"], cls="ERROR"),
        row(4, ["é ünïcode key wörds ", "{x}"]),
        row(5, ["{msg}"]),
    ]
    reference = build_index(rows, version="v", engine="aho-corasick")
    index = build_index(rows, version="v", engine=engine)
    messages = [
        "Unknown speculative phase: draft",
        "x Cannot open file /a for reading and Worker 3 died unexpectedly",
        "é ünïcode key wörds 1",
        "nothing",
        "",
    ]
    for message in messages:
        assert sorted(index.candidates(message)) == sorted(reference.candidates(message))
    save_index(index, tmp_path / "i")
    loaded = load_index(tmp_path / "i", version="v")
    assert sorted(loaded.candidates(messages[1])) == [1, 2]
    lines = ["2026-01-01 00:00:00 ERROR Worker 9 died unexpectedly", "ok", "é ünïcode key wörds z"]
    ours, theirs = Scanner(index).scan(lines), Scanner(reference).scan(lines)
    assert [(g.rowids, g.count) for g in ours.groups] == [
        (g.rowids, g.count) for g in theirs.groups
    ]


def test_big_buckets_are_sorted_by_how_templates_begin():
    shared = " is not a valid option for "
    # "#42:" has too few letters to be a key: every template's key is in the shared text.
    rows_ = [row(n + 1, [f"#{n}:", "{a}", shared, "{x}"]) for n in range(100)]
    rows_.append(row(101, ["{name}", shared, "{x}"]))
    index = build_index(rows_, version="v")
    message = f"#42: thing{shared}draft"
    anchored = index.candidates(message, anchored=True)
    everything = index.candidates(message)
    assert len(everything) == 101
    assert 42 in anchored and 100 in anchored and len(anchored) < 15
    matching = [t for t in everything if index.template(t).match(message) is not None]
    assert sorted(t for t in anchored if index.template(t).match(message)) == sorted(matching)


_WORDS = ["Invalid", "value", "for", "x", "is", "not", "a", ":", "'", "`", " ", "  ", "\n", "é"]


@settings(max_examples=300)
@given(
    templates=st.lists(
        st.lists(
            st.tuples(st.booleans(), st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4)),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=60,
    ),
    values=st.lists(st.sampled_from(["", "x", "42", "Invalid value", " is ", "é"]), min_size=4),
    chosen=st.integers(min_value=0),
)
def test_whole_message_lookups_never_lose_a_matching_template(templates, values, chosen):
    # Heads, tails and the crowded split only narrow the candidates: every template that
    # produces the message is still among them (as the unanchored search finds it).
    rows = []
    for number, parts in enumerate(templates):
        data = [
            [f"h{i}", True] if hole else ["".join(words), False]
            for i, (hole, words) in enumerate(parts)
        ]
        rows.append((number + 1, "ValueError", "m.py", 1, 1, "raise", json.dumps(data)))
    # Many templates sharing head and tail make the crowded split run.
    rows += [
        (
            len(rows) + n + 1,
            "E",
            "m.py",
            1,
            1,
            "raise",
            json.dumps([["Invalid ", False], ["v", True], [f" key{n} here ", False], ["w", True]]),
        )
        for n in range(40)
    ]
    index = build_index(rows, version="v")
    parts = json.loads(rows[chosen % len(templates)][6])
    message = "".join(
        values[i % len(values)] if hole else text for i, (text, hole) in enumerate(parts)
    )
    message = message.strip()
    if not message:
        return
    matching = {
        t
        for t in range(index.template_count)
        if not index.is_generic(t) and index.template(t).match(message) is not None
    }
    assert matching <= set(index.candidates(message, anchored=True))
    # Inside a line, only specific templates are looked for.
    specific = {t for t in matching if index.literal_length(t) >= SPECIFIC}
    assert specific <= set(index.candidates(message))
    assert all(index.literal_length(t) >= SPECIFIC for t in index.candidates(message))
    verified = index.verify(index.candidates(message, anchored=True), message)
    # (A multi-line template may also match loosely, its whitespace re-wrapped.)
    assert {template for template, _, loosely in verified if not loosely} == matching
    crowded = "Invalid 1 key7 here 2"
    assert index.template(index.template_count - 33).match(crowded) is not None
    assert index.template_count - 33 in index.candidates(crowded, anchored=True)


_SPACES = st.sampled_from([" ", "  ", "\n", "\n  ", "\t", "\n" + " " * 14])


@settings(max_examples=300)
@given(
    last=st.lists(st.sampled_from(["is", "x", ":", "é", "Invalid", " ", "  ", "\n"]), max_size=6),
    value=st.text(alphabet=" \nab:", max_size=8),
    spaces=st.lists(_SPACES, min_size=1, max_size=3),
)
def test_a_message_ends_with_its_template_tail_however_it_was_wrapped(last, value, spaces):
    # Candidates are narrowed by tail; a message must never lose its template that way,
    # also when a paste re-wrapped it (every whitespace run replaced by another).
    literal = "".join(last).rstrip()
    template = CompiledTemplate(literals=("", literal), holes=("value",))
    message = (value + literal).strip()
    runs = iter(spaces * len(message))
    rewrapped = re.sub(r"\s+", lambda _: next(runs), message)
    tail = template_tail(literal)
    for pasted in (message, rewrapped):
        if template.match(pasted) is not None or template.match_loose(pasted) is not None:
            assert _tail_end(pasted).endswith(tail)


@settings(max_examples=500)
@given(
    text=st.one_of(
        st.text(alphabet="ab ", max_size=8),
        st.text(alphabet="ab: .\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f", max_size=12),
        st.text(
            alphabet=st.one_of(
                st.sampled_from(list("ab \n\x85\xa0\u2003\u3000é")), st.characters()
            ),
            max_size=40,
        ),
    )
)
def test_normalising_space_is_splitting_and_joining(text):
    # A text already single-spaced is returned as it is, without a split: the same text.
    assert normalize_space(text) == " ".join(text.split())


def test_a_single_spaced_text_is_its_own_normal_form():
    text = "Response status expected to be within [200..299] range: 'é'"
    assert normalize_space(text) is text
    assert normalize_space(" a  b\x1fc\n") == "a b c"
    assert normalize_space("a\xa0b\u3000c") == "a b c"
    # What the short way rests on: no whitespace but the space is printable.
    assert not [
        hex(point)
        for point in range(sys.maxunicode + 1)
        if chr(point).isspace() and chr(point).isprintable() and point != 0x20
    ]


@settings(max_examples=500)
@given(
    text=st.one_of(
        st.text(alphabet="ab \n", max_size=40),
        st.text(alphabet=st.sampled_from(list("abc: \t\n\x1f\xa0é")), max_size=80),
    )
)
def test_a_message_head_is_the_start_of_its_normal_form(text):
    # Only a head's first characters are checked when they are single-spaced already.
    longest = HEAD_LENGTHS[0]
    assert _head_start(text) == normalize_space(text[: longest * 4])[:longest]


@pytest.mark.parametrize(
    "pasted",
    [
        "Invalid\n    value for phase: draft",  # a run inside the first characters
        "Invalid value   \n for phase: draft",  # one that the first characters end in
        "Invalid  value for phase: draft",
    ],
)
def test_a_message_rewrapped_in_its_first_characters_keeps_its_template(pasted):
    index = build_index(
        [row(1, ["Invalid value for phase: ", "{phase}"]), row(2, ["Invalid ", "{x}"])],
        version="v",
    )
    assert 0 in index.candidates(pasted, anchored=True)
    verified = index.verify([0], pasted, loose=True)
    assert [(number, captures) for number, captures, _ in verified] == [(0, ("draft",))]


def test_a_tail_window_that_begins_inside_a_whitespace_run_still_sees_the_run():
    assert _tail_end("x" * 100 + " " * 40 + "ab") == "x ab"
    assert _tail_end("E\n" + " " * 12 + "abc") == " abc"  # 17 characters: just over the window
    assert template_tail("value is \n  ") == ""  # ends with whitespace: the hole may follow
    assert template_tail("  the value\n  is") == "e is"


@pytest.mark.parametrize(
    ("literals", "message", "expected"),
    [
        (
            ("Unknown phase ", ": expected one of ", ""),
            "Unknown phase x: expected o",
            (("x", "…"), 26),
        ),
        (
            ("Unknown phase ", ": expected one of ", ""),
            "Unknown phase x: expected one of a",
            (("x", "a…"), 32),
        ),
        (("Unknown phase ", ": expected one of ", ""), "Unknown ph", (("…", "…"), 10)),
        (("Unknown phase ", ": expected one of ", ""), "Unknown stage", None),
        (("x ", " y"), "x 1 y z", (("1 y z…",), 2)),
        (("no holes",), "no ho", ((), 5)),
        (("no holes",), "no hx", None),
    ],
)
def test_a_message_cut_short_matches_the_start_of_a_template(literals, message, expected):
    assert match_cut(literals, message) == expected


def test_a_line_past_32_bits_does_not_stop_the_index():
    # The record model bounds lines; a store written otherwise still gets an index.
    far = 2**40
    index = build_index(
        [row(1, ["Cannot open file ", "{path}"], line=far, end=far + 5)], version="s:1"
    )
    assert index.line(0) == index.end_line(0) == 2**31 - 1
    assert index.verify([0], "Cannot open file a.txt") == [(0, ("a.txt",), False)]
