"""errdex's compiled modules (mypyc, errdex/_native.py): used only when built from the sources
next to them, and giving exactly what the pure modules give."""

from __future__ import annotations

import ast
import importlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from corpus import unpacked_wheel

from errdex import _native
from errdex.match.index import INDEX_FIELDS

PACKAGE = Path(_native.__file__).parent


def _run(code: str, *args: str, pure: bool = False, path: Path | None = None) -> str:
    env = {**os.environ, "ERRDEX_PURE": "1" if pure else ""}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        # Not the checkout, whose errdex would come first on sys.path.
        cwd=None if path is None else path if path.is_dir() else path.parent,
        timeout=600,
    ).stdout


def test_the_compiled_modules_run_when_built_and_ci_builds_them():
    files = {name: importlib.import_module(name).__file__ or "" for name in _native.COMPILED}
    compiled = {name for name, file in files.items() if not file.endswith(".py")}
    if _native.MODE == "compiled":
        assert compiled == set(_native.COMPILED)
    else:
        assert compiled == set(), files  # all or none: they call each other directly
    if os.environ.get("CI"):
        # A fresh clone's `make test` installs errdex, which compiles them: a compile that
        # failed would leave errdex slow without a word.
        assert _native.build_state() == "compiled"


_MODE = "import errdex, errdex._native as n, errdex.match.index as i; print(n.MODE, i.__file__)"


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "errdex"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_an_edited_source_or_a_missing_build_runs_every_module_from_its_source(tmp_path):
    copy = _copy(tmp_path)
    assert _run(_MODE, pure=True, path=tmp_path).split()[0] == "disabled"
    mode, index_file = _run(_MODE, path=tmp_path).split()
    assert Path(index_file).parent == copy / "match"
    built = _native.build_state()
    assert mode == ("compiled" if built == "compiled" else "pure")
    if mode == "compiled":
        assert not index_file.endswith(".py")
    # A changed source, compiled or not (compiled code holds the types of the modules it
    # imports), makes the build stale: all of them run from their sources.
    models = copy / "models.py"
    models.write_text(models.read_text() + "\n# edited\n")
    mode, index_file = _run(_MODE, path=tmp_path).split()
    assert (mode, Path(index_file).name) == ("stale" if built != "pure" else "pure", "index.py")
    (copy / _native.MANIFEST).unlink(missing_ok=True)
    mode, index_file = _run(_MODE, path=tmp_path).split()
    assert (mode, Path(index_file).name) == ("pure", "index.py")


def test_an_extension_left_from_an_older_build_never_runs(tmp_path):
    if _native.build_state() != "compiled":
        pytest.skip("needs the compiled modules (CI requires them)")
    copy = _copy(tmp_path)
    index = next((copy / "match").glob("index.*.so"))
    # A module since dropped from COMPILED: its extension is there, its source edited.
    shutil.copy(index, index.with_name(index.name.replace("index.", "scan.", 1)))
    code = "import errdex._native as n, errdex.match.scan as s; print(n.MODE, s.__file__)"
    mode, scan_file = _run(code, path=tmp_path).split()
    assert (mode, Path(scan_file)) == ("stale", copy / "match" / "scan.py")


def test_errdex_imports_from_a_zip(tmp_path):
    # A zipapp, shiv or PyInstaller bundle: no extension can load from it, so it runs pure.
    archive = tmp_path / "errdex.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(PACKAGE.rglob("*.py")):
            bundle.write(path, (Path("errdex") / path.relative_to(PACKAGE)).as_posix())
    mode, index_file = _run(_MODE, path=archive).split()
    assert mode == "pure" and index_file == str(archive / "errdex" / "match" / "index.py")


_VERSION = "from errdex.extract.python import PythonExtractor as P; print(P().version)"


def test_the_extractors_version_is_the_same_compiled_or_not():
    # It keys the files cache: it must follow the source, not whether it is compiled.
    assert _run(_VERSION).strip() == _run(_VERSION, pure=True).strip()


def test_the_manifest_is_every_sources_digest():
    digests = _native.manifest()
    assert sorted(digests) == sorted(
        path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
    )
    assert {"match/index.py", "models.py", "_native.py"} <= set(digests)
    assert all(len(digest) == 64 for digest in digests.values())
    if _native.MODE == "compiled":
        assert json.loads((PACKAGE / _native.MANIFEST).read_text()) == digests


def test_no_constant_of_a_compiled_module_is_a_tuple_built_again_at_each_use():
    # mypyc keeps a ``Final`` tuple whose type is its length (``X: Final = ("a", "b")``) as a
    # C struct, and builds a new tuple object from it at each use as an object: ``in``, a
    # loop, ``startswith``. Typed ``Final[tuple[str, ...]]``, it is one object, built once.
    # A fixed length must be asked for (``Final[tuple[int, int]]``), not inferred.
    inferred = []
    for module in _native.COMPILED:
        path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.annotation, ast.Name)
                and node.annotation.id == "Final"
                and isinstance(node.value, ast.Tuple)
            ):
                inferred.append(f"{module}: {ast.unparse(node.target)} (line {node.lineno})")
    assert not inferred


def test_a_pickled_index_keeps_every_attribute():
    # Compiled, MatcherIndex has no __dict__: it pickles the attributes INDEX_FIELDS names.
    source = (PACKAGE / "match" / "index.py").read_text()
    init = next(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name == "__init__"
    )
    assigned = []
    for node in ast.walk(init):
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AnnAssign) else []
        assigned += [target.attr for target in targets if isinstance(target, ast.Attribute)]
    assert sorted(assigned) == sorted(INDEX_FIELDS)


_MINE_AND_EXPLAIN = """
import json, random, sys
from pathlib import Path
import errdex._native
from errdex.extract.files import DirectorySource
from errdex.match.explain import Explainer
from errdex.models import SourceInfo
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore

db = Path(sys.argv[1])
texts = json.loads(Path(sys.argv[2]).read_text())
out = {"mode": errdex._native.MODE, "records": [], "answers": []}
with SQLiteStore(db) as store:
    pipeline = Pipeline(Settings(db=db, jobs=1), store)
    for root in sys.argv[3:]:
        name = Path(root).name
        info = SourceInfo(key=name, repo="pypi:" + name, kind="pypi", package=name, version="1")
        pipeline.mine(DirectorySource(Path(root), info))
    for (data,) in store._db.execute("select data from records order by rowid"):
        record = json.loads(data)
        record.pop("analyzedAt", None)
        out["records"].append(record)
    explainer = Explainer.open(store, cache=None)
    rng = random.Random(5)
    for record in out["records"]:
        message = record["errorMessage"]
        texts.append(message)
        texts.append(record["errorClass"] + ": " + message.replace("{", "<").replace("}", ">"))
    for text in texts:
        answer = explainer.explain(text, top=3).to_json()
        for match in answer["matches"]:
            match["record"].pop("analyzedAt", None)
        out["answers"].append(answer)
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.slow
def test_compiled_and_pure_modules_mine_and_explain_alike(tmp_path):
    roots = [unpacked_wheel("click", "8.1.7"), unpacked_wheel("requests", "2.32.3")]
    corpus = Path(__file__).parent / "corpus" / "real"
    texts = [json.loads(path.read_text())["text"] for path in sorted(corpus.glob("*.json"))]
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    outputs = []
    for pure in (False, True):
        db = tmp_path / f"{pure}.sqlite3"
        args = (str(db), str(tmp_path / "texts.json"), *map(str, roots))
        outputs.append(json.loads(_run(_MINE_AND_EXPLAIN, *args, pure=pure)))
    compiled, pure = outputs
    assert compiled["mode"] == _native.build_state() and pure["mode"] == "disabled"
    assert len(compiled["records"]) > 200
    assert compiled["records"] == pure["records"]
    assert sum(bool(answer["matches"]) for answer in compiled["answers"]) > 300
    for mine, theirs in zip(compiled["answers"], pure["answers"], strict=True):
        assert mine == theirs


@pytest.mark.slow
def test_a_compile_that_fails_leaves_a_pure_install_with_a_warning(tmp_path):
    # A machine without a C compiler still installs errdex: pure, and told so.
    root = PACKAGE.parent
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(root / name, source / name)
    shutil.copytree(
        PACKAGE,
        source / "errdex",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", _native.MANIFEST),
    )
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path), "."],
        cwd=source,
        capture_output=True,
        text=True,
        env={**os.environ, "CC": "false", "ERRDEX_PURE": ""},
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    assert "errdex: the compiled modules did not build" in built.stdout + built.stderr
    (wheel,) = tmp_path.glob("errdex-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "errdex/_native.py" in names and "errdex/match/explain.py" in names
    assert f"errdex/{_native.MANIFEST}" not in names
    assert not [name for name in names if name.endswith(".so")]
