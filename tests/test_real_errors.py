"""Real error texts from public issue trackers, explained against the versions users had.

Each case in ``tests/corpus/real/`` holds a text a user pasted in a public issue, its URL, the
package version, and the raise site (file, line, class) checked by hand against that
version's source. The test downloads every version (cached), mines them all into one store —
so each answer has every other package and version as distractors — and explains each text.
"""

import json
from pathlib import Path

import pytest
from corpus import unpacked_wheel

from errdex.extract.files import DirectorySource
from errdex.match.explain import Explainer
from errdex.models import SourceInfo
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore

CASES = sorted((Path(__file__).parent / "corpus" / "real").glob("*.json"))


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def real_errors_store(tmp_path_factory):
    db = tmp_path_factory.mktemp("real-errors") / "store.sqlite3"
    versions = sorted({(load(p)["package"], load(p)["version"]) for p in CASES})
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db, jobs=2), store)
        for name, version in versions:
            root = unpacked_wheel(name, version)
            info = SourceInfo(
                key=f"pypi:{name}=={version}",
                repo=f"pypi:{name}",
                kind="pypi",
                location=str(root),
                package=name,
                version=version,
            )
            pipeline.mine(DirectorySource(root, info))
    return db


def test_the_corpus_is_large_and_well_formed():
    assert len(CASES) >= 40
    for path in CASES:
        case = load(path)
        assert case["url"].startswith("https://github.com/"), path.name
        assert set(case["expected"]) == {"file", "line", "class"}, path.name


@pytest.mark.slow
def test_real_error_texts_are_explained_to_their_raise_site(real_errors_store):
    with SQLiteStore(real_errors_store) as store:
        explainer = Explainer.for_database(store, real_errors_store)
        hits, misses = 0, []
        for path in CASES:
            case = load(path)
            expected = case["expected"]
            answer = explainer.explain(case["text"], top=20)
            best = answer.matches[0].record if answer.matches else None
            exact = [m.record for m in answer.matches if m.kind.value == "exact"]
            site = (expected["file"], expected["line"], expected["class"])
            right = bool(exact) and (
                (exact[0].file_path, exact[0].line_number, exact[0].error_class) == site
                or (
                    answer.ambiguous
                    and any((r.file_path, r.line_number, r.error_class) == site for r in exact)
                )
            )
            if right:
                hits += 1
            else:
                got = (
                    f"{best.file_path}:{best.line_number} {best.error_class}" if best else "nothing"
                )
                misses.append(f"{path.name}: expected {expected}, got {got}")
        rate = hits / len(CASES)
        print(f"\nreal error texts: {hits}/{len(CASES)} = {rate:.0%} top-1")
        for miss in misses:
            print("  miss", miss)
        assert rate >= 0.85, "\n".join(misses)
