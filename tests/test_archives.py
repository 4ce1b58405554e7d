"""Safe unpacking: hostile zips and tars are refused entry by entry, or whole, and nothing is
ever written outside the cache. Every archive here is built by the test with zipfile/tarfile."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
import tarfile
import textwrap
import uuid
import warnings
import zipfile
from pathlib import Path

import pytest

from errdex.extract.archives import (
    RATIO_FLOOR,
    ArchiveLimits,
    ArchiveSource,
    safe_member_path,
    unpack_archive,
)
from errdex.models import ProblemKind, SourceInfo
from errdex.pipeline import Pipeline
from errdex.settings import resolve_settings
from errdex.store.sqlite import SQLiteStore

BENIGN = 'def check(x):\n    if x is None:\n        raise ValueError("benign message from ok.py")\n'
MIB = 1 << 20


class Sandbox:
    """A directory holding the archive (``in/``) and the cache (``cache/``), and nothing else.

    The unpack target is three levels below the sandbox, so ``../../../name`` from the target
    lands in the sandbox itself, outside the cache.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.inbox = root / "in"
        self.cache = root / "cache"
        self.target = self.cache / "unpacked" / "t"
        self.inbox.mkdir(parents=True)
        self.absolute = f"/errdex-abs-{uuid.uuid4().hex}.py"

    def listing(self) -> set[str]:
        """Every path under the sandbox (links not followed), with its type."""
        found = set()
        for directory, subdirectories, names in os.walk(self.root):
            for name in subdirectories + names:
                full = Path(directory, name)
                kind = stat.S_IFMT(full.lstat().st_mode)
                found.add((full.relative_to(self.root).as_posix(), kind))
        return found

    def unpack(self, archive: Path, limits: ArchiveLimits | None = None):
        before = self.listing()
        parent_before = sorted(os.listdir(self.root.parent))
        result = unpack_archive(archive, self.target, limits=limits or ArchiveLimits())
        after = self.listing()
        new = {path for path, _ in after - before}
        # Nothing outside the target: not in the sandbox, not beside it, not at /.
        outside_target = {p for p in new if not p.startswith("cache/unpacked/t/")}
        assert outside_target <= {"cache", "cache/unpacked", "cache/unpacked/t"}, outside_target
        assert sorted(os.listdir(self.root.parent)) == parent_before
        assert not Path(self.absolute).exists()
        # No link of any kind in what was written, and no temporary directory left.
        for path, kind in after:
            assert kind in (stat.S_IFREG, stat.S_IFDIR), path
        assert os.listdir(self.target.parent) == ["t"]
        return result

    def mine(self, archive: Path, tmp_path: Path, limits: ArchiveLimits | None = None, **flags):
        result = self.unpack(archive, limits)
        info = SourceInfo(key="hostile", repo="hostile", kind="directory", location=str(archive))
        source = ArchiveSource(self.target, result, info)
        settings = resolve_settings({"db": tmp_path / "store.sqlite3", **flags}).settings
        with SQLiteStore(settings.db) as store:
            report = Pipeline(settings, store).mine(source)
            records = [e.record for e in store.iter_envelopes()]
        return result, source, report, records


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path / "sandbox")


def make_zip(path: Path, entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, data in entries:
            bundle.writestr(name, data)
    return path


def zip_symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def patch_declared_size(path: Path, name: str, size: int) -> None:
    """Rewrite the uncompressed size a zip's headers declare for one entry."""
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    patched = 0
    for signature, size_at, name_length_at, name_at in (
        (b"PK\x01\x02", 24, 28, 46),
        (b"PK\x03\x04", 22, 26, 30),
    ):
        start = data.find(signature)
        while start != -1:
            length = int.from_bytes(
                data[start + name_length_at : start + name_length_at + 2], "little"
            )
            if bytes(data[start + name_at : start + name_at + length]) == encoded:
                data[start + size_at : start + size_at + 4] = size.to_bytes(4, "little")
                patched += 1
            start = data.find(signature, start + 4)
    assert patched == 2
    path.write_bytes(bytes(data))


def tar_entry(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = ""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.mode = 0o644
    return info, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def make_tar(path: Path, mode: str, entries) -> Path:
    with tarfile.open(path, mode) as bundle:
        for info, data in entries:
            bundle.addfile(info, data)
    return path


def messages(result) -> dict[str, str]:
    return {problem.path: problem.message for problem in result.problems}


def reported(report) -> dict[str, tuple[str, str]]:
    return {p.path: (p.kind.value, p.message) for p in report.problems}


# -- entry names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pkg/a.py", "pkg/a.py"),
        ("./pkg//a.py", "pkg/a.py"),
        ("pkg/./sub/", "pkg/sub"),
    ],
)
def test_safe_member_path_normalises_harmless_names(name, expected):
    assert safe_member_path(name) == expected


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.py", "'..' component"),
        ("a/../../x.py", "'..' component"),
        ("pkg/..", "'..' component"),
        ("/abs.py", "absolute path"),
        ("//server/share/x.py", "absolute path"),
        ("C:/windows/x.py", "drive letter"),
        ("c:x.py", "drive letter"),
        ("pkg\\..\\..\\x.py", "backslash"),
        ("\\\\server\\x.py", "backslash"),
        ("pkg/x.py:stream", "colon"),
        ("pkg/\x1b[2Jx.py", "control character"),
        ("", "empty"),
        ("./", "empty"),
    ],
)
def test_safe_member_path_refuses_names_that_leave_the_target(name, reason):
    with pytest.raises(ValueError, match=reason):
        safe_member_path(name)


# -- zip -----------------------------------------------------------------------------------


def test_zip_entries_escaping_the_target_are_refused_and_the_rest_is_mined(box, tmp_path):
    hostile = {
        "../../../evil.py": "'..' component",
        "pkg/../../../../x.py": "'..' component",
        box.absolute: "absolute path",
        "C:/windows/evil.py": "drive letter",
        "pkg\\..\\..\\..\\..\\bs.py": "backslash",
    }
    archive = make_zip(
        box.inbox / "hostile-1.0-py3-none-any.whl",
        [("pkg/__init__.py", b""), ("pkg/ok.py", BENIGN.encode())]
        + [(name, b'raise RuntimeError("escaped")\n') for name in hostile],
    )
    result, source, report, records = box.mine(archive, tmp_path)

    assert result.format == "zip" and not result.refused
    assert result.files == ("pkg/__init__.py", "pkg/ok.py")
    got = messages(result)
    assert set(got) == set(hostile)
    for name, reason in hostile.items():
        assert reason in got[name], (name, got[name])
    # Every refusal reaches the run report, as an unsafe-archive problem.
    assert {path: kind for path, (kind, _) in reported(report).items()} == dict.fromkeys(
        hostile, "unsafe-archive"
    )
    assert [(r.file_path, r.error_message) for r in records] == [
        ("pkg/ok.py", "benign message from ok.py")
    ]
    assert report.files == 2 + len(hostile)  # the two real files and the refused entries
    assert not (box.root / "evil.py").exists()


def test_zip_symlinks_are_refused_and_a_file_below_one_lands_inside(box, tmp_path):
    outside = box.root / "outside"
    outside.mkdir()
    archive = make_zip(
        box.inbox / "links.whl",
        [
            ("pkg/ok.py", BENIGN.encode()),
            zip_symlink("pkg/passwd.py", "/etc/passwd"),
            zip_symlink("pkg/escape", "../../../outside"),
            ("pkg/escape/evil.py", b'raise RuntimeError("through the link")\n'),
        ],
    )
    result, _, report, records = box.mine(archive, tmp_path)

    got = messages(result)
    assert set(got) == {"pkg/passwd.py", "pkg/escape"}
    assert all("symbolic link" in message for message in got.values())
    # The link was never made, so the file below its name is an ordinary file of the tree.
    assert (box.target / "pkg" / "escape").is_dir()
    assert not (box.target / "pkg" / "escape").is_symlink()
    assert list(outside.iterdir()) == []
    assert reported(report)["pkg/passwd.py"][0] == "unsafe-archive"
    assert "pkg/escape" not in reported(report)  # not a .py name: kept in source.problems only
    assert {r.error_message for r in records} == {
        "benign message from ok.py",
        "through the link",
    }


def test_zip_declaring_a_gigabyte_is_refused_whole(box, tmp_path):
    archive = make_zip(
        box.inbox / "huge-1.0-py3-none-any.whl",
        [("pkg/ok.py", BENIGN.encode()), ("pkg/big.py", b"x = 1\n" * 100)],
    )
    patch_declared_size(archive, "pkg/big.py", 1 << 30)
    assert zipfile.ZipFile(archive).getinfo("pkg/big.py").file_size == 1 << 30

    result, source, report, records = box.mine(archive, tmp_path)

    assert result.refused and result.files == () and result.bytes_written == 0
    (problem,) = result.problems
    assert problem.path == "huge-1.0-py3-none-any.whl"
    assert problem.kind is ProblemKind.UNSAFE_ARCHIVE
    assert f"declares {(1 << 30) + len(BENIGN)} bytes uncompressed" in problem.message
    assert "512000000-byte cap" in problem.message
    assert list(box.target.iterdir()) == []
    assert source.problems == (problem,)
    assert records == [] and report.files == 0


def test_zip_bomb_is_refused_without_inflating_it(box, tmp_path):
    archive = box.inbox / "bomb.whl"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("pkg/ok.py", BENIGN)
        with bundle.open("pkg/bomb.py", "w") as entry:
            zeros = bytes(MIB)
            for _ in range(200):
                entry.write(zeros)
    assert archive.stat().st_size < MIB  # 200 MB of zeros, small on disk

    result, _, report, records = box.mine(archive, tmp_path)

    assert not result.refused
    assert result.files == ("pkg/ok.py",)
    assert result.bytes_written == len(BENIGN)
    message = messages(result)["pkg/bomb.py"]
    assert "declares 209715200 bytes" in message and "decompression bomb" in message
    assert reported(report)["pkg/bomb.py"] == ("unsafe-archive", message)
    assert not (box.target / "pkg" / "bomb.py").exists()
    assert [r.error_message for r in records] == ["benign message from ok.py"]


def test_zip_header_that_understates_the_size_is_not_trusted(box, tmp_path):
    archive = make_zip(
        box.inbox / "liar.whl", [("pkg/ok.py", BENIGN.encode()), ("pkg/liar.py", bytes(20 * MIB))]
    )
    patch_declared_size(archive, "pkg/liar.py", 1000)

    result, _, report, _ = box.mine(archive, tmp_path)

    assert result.files == ("pkg/ok.py",)
    assert result.bytes_written == len(BENIGN)  # the partial liar.py was removed
    assert "corrupt entry" in messages(result)["pkg/liar.py"]
    assert reported(report)["pkg/liar.py"][0] == "unsafe-archive"
    assert not (box.target / "pkg" / "liar.py").exists()


def test_damaged_zip_entry_is_refused_and_the_others_kept(box, tmp_path):
    archive = make_zip(
        box.inbox / "damaged.whl",
        [("pkg/ok.py", BENIGN.encode()), ("pkg/bad.py", b"raise KeyError('k')\n" * 2000)],
    )
    data = bytearray(archive.read_bytes())
    info = zipfile.ZipFile(archive).getinfo("pkg/bad.py")
    start = info.header_offset + 30 + len("pkg/bad.py") + len(info.extra)
    data[start + 10 : start + 40] = bytes(30)  # scramble the deflate stream
    archive.write_bytes(bytes(data))

    result, _, report, records = box.mine(archive, tmp_path)

    assert result.files == ("pkg/ok.py",)
    assert "corrupt entry" in messages(result)["pkg/bad.py"]
    assert [r.error_message for r in records] == ["benign message from ok.py"]


def test_entry_over_the_file_cap_is_skipped_as_too_large(box, tmp_path):
    big = ("\n".join(f"x{n} = {n}" for n in range(2000)) + "\n").encode()
    archive = make_zip(box.inbox / "big.whl", [("pkg/ok.py", BENIGN.encode()), ("pkg/big.py", big)])
    limits = ArchiveLimits(max_file_bytes=5000)

    result, _, report, _ = box.mine(archive, tmp_path, limits, max_file_bytes=5000)

    assert result.files == ("pkg/ok.py",)
    (problem,) = result.problems
    assert problem.kind is ProblemKind.TOO_LARGE
    assert problem.message == f"{len(big)} bytes is over the 5000-byte cap"
    assert reported(report) == {"pkg/big.py": ("too-large", problem.message)}


def test_zip_with_too_many_entries_is_refused_whole(box):
    archive = make_zip(box.inbox / "many.whl", [(f"m{n}.py", b"") for n in range(6)])
    result = box.unpack(archive, ArchiveLimits(max_entries=5))
    assert result.refused and "6 entries is over the 5-entry cap" in result.problems[0].message


# -- tar -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz", "w"])
def test_tar_links_devices_and_escapes_are_refused(box, tmp_path, mode):
    outside = box.root / "outside.py"
    hostile = {
        "hostile-1.0/../../../../evil.py": "'..' component",
        box.absolute: "absolute path",
        "hostile-1.0/pkg/link.py": "symbolic link to '../../../../outside.py'",
        "hostile-1.0/pkg/hard.py": "hard link to '../../../../outside.py'",
        "hostile-1.0/pkg/dev.py": "device file",
        "hostile-1.0/pkg/fifo.py": "fifo",
        "hostile-1.0/pkg/escape": "symbolic link to",
    }
    archive = make_tar(
        box.inbox / "hostile-1.0.tar",
        mode,
        [
            tar_entry("hostile-1.0/pkg/ok.py", data=BENIGN.encode()),
            tar_entry("hostile-1.0/../../../../evil.py", data=b"evil = 1\n"),
            tar_entry(box.absolute, data=b"evil = 1\n"),
            tar_entry("hostile-1.0/pkg/link.py", tarfile.SYMTYPE, link="../../../../outside.py"),
            tar_entry("hostile-1.0/pkg/hard.py", tarfile.LNKTYPE, link="../../../../outside.py"),
            tar_entry("hostile-1.0/pkg/dev.py", tarfile.CHRTYPE),
            tar_entry("hostile-1.0/pkg/fifo.py", tarfile.FIFOTYPE),
            tar_entry("hostile-1.0/pkg/escape", tarfile.SYMTYPE, link="/"),
            tar_entry("hostile-1.0/pkg/escape/inside.py", data=b'raise OSError("inside")\n'),
        ],
    )
    result, _, report, records = box.mine(archive, tmp_path)

    assert result.format == "tar" and not result.refused
    got = messages(result)
    assert set(got) == set(hostile)
    for name, reason in hostile.items():
        assert reason in got[name], (name, got[name])
    assert not outside.exists()
    assert (box.target / "hostile-1.0" / "pkg" / "escape").is_dir()
    py_names = {name for name in hostile if name.endswith(".py")}
    assert set(reported(report)) == py_names
    assert {r.error_message for r in records} == {"benign message from ok.py", "inside"}


def test_tar_bomb_is_refused_whole_before_it_is_inflated(box):
    class Zeros(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, buffer):
            buffer[:] = bytes(len(buffer))
            return len(buffer)

    archive = box.inbox / "bomb-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as bundle:
        bundle.addfile(*tar_entry("bomb-1.0/ok.py", data=BENIGN.encode()))
        info = tarfile.TarInfo("bomb-1.0/zeros.py")
        info.size = 200 * MIB
        bundle.addfile(info, io.BufferedReader(Zeros()))
    assert archive.stat().st_size < MIB

    result = box.unpack(archive)

    assert result.refused and result.files == ()
    message = result.problems[0].message
    assert "compression-ratio limit" in message and "'bomb-1.0/zeros.py'" in message
    assert list(box.target.iterdir()) == []


def test_tar_header_bomb_is_stopped_inside_tarfile(box):
    # A 50 MB entry name: tarfile reads a long name into memory before it returns the entry,
    # so only the bound on the decompressed stream itself can stop it.
    archive = box.inbox / "names-1.0.tar.gz"
    with tarfile.open(archive, "w:gz", format=tarfile.GNU_FORMAT) as bundle:
        bundle.addfile(*tar_entry("a" * (50 * MIB) + ".py", data=b"x = 1\n"))
    assert archive.stat().st_size < MIB

    result = box.unpack(archive)

    assert result.refused
    assert "compression-ratio limit" in result.problems[0].message
    assert list(box.target.iterdir()) == []


def test_duplicate_zip_entry_keeps_the_first(box, tmp_path):
    archive = box.inbox / "dup.whl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns about the duplicate
        make_zip(
            archive,
            [
                ("pkg/m.py", b'raise ValueError("first")\n'),
                ("pkg/m.py", b'raise ValueError("second")\n'),
            ],
        )

    result, source, report, records = box.mine(archive, tmp_path)

    assert result.files == ("pkg/m.py",)
    assert messages(result) == {"pkg/m.py": "duplicate entry; the first one is kept"}
    assert [r.error_message for r in records] == ["first"]
    assert len(source.problems) == 1 and report.files == 1


def test_tar_declaring_more_than_the_total_cap_is_refused_whole(box):
    archive = make_tar(
        box.inbox / "big-1.0.tar.gz",
        "w:gz",
        [
            tar_entry("big-1.0/a.py", data=os.urandom(600_000)),
            tar_entry("big-1.0/b.py", data=os.urandom(600_000)),
        ],
    )
    result = box.unpack(archive, ArchiveLimits(max_total_bytes=1_000_000))
    assert result.refused
    assert "declares more than the 1000000-byte cap" in result.problems[0].message
    assert list(box.target.iterdir()) == []


# -- not archives, or broken ones ------------------------------------------------------------


def _truncated_zip(path: Path) -> Path:
    make_zip(path, [("pkg/ok.py", BENIGN.encode()), ("pkg/more.py", os.urandom(5000))])
    path.write_bytes(path.read_bytes()[:3000])
    return path


def _truncated_tar(path: Path) -> Path:
    make_tar(
        path,
        "w:gz",
        [
            tar_entry("t-1.0/ok.py", data=BENIGN.encode()),
            tar_entry("t-1.0/more.py", data=os.urandom(50_000)),
        ],
    )
    path.write_bytes(path.read_bytes()[:20_000])
    return path


@pytest.mark.parametrize(
    ("name", "build", "reason"),
    [
        ("noise.whl", lambda p: p.write_bytes(os.urandom(4096)) and p, "not a zip or tar archive"),
        ("empty.tar.gz", lambda p: p.write_bytes(b"") or p, "not a zip or tar archive"),
        ("text.tar.gz", lambda p: p.write_text("hello\n") and p, "not a zip or tar archive"),
        ("cut.whl", _truncated_zip, "corrupt zip archive"),
        ("cut.tar.gz", _truncated_tar, "corrupt tar archive"),
    ],
)
def test_corrupt_or_foreign_files_are_refused_whole(box, tmp_path, name, build, reason):
    archive = build(box.inbox / name)
    result, source, report, records = box.mine(archive, tmp_path)
    assert result.refused and result.files == ()
    (problem,) = result.problems
    assert problem.path == name and problem.kind is ProblemKind.UNSAFE_ARCHIVE
    assert reason in problem.message
    assert list(box.target.iterdir()) == []
    assert records == [] and report.files == 0


def test_unpacking_into_an_existing_directory_is_refused(box):
    from errdex.errors import SourceError

    archive = make_zip(box.inbox / "a.whl", [("a.py", b"")])
    box.target.mkdir(parents=True)
    with pytest.raises(SourceError, match="already exists"):
        unpack_archive(archive, box.target, limits=ArchiveLimits())


def test_a_killed_unpack_leaves_no_directory_that_looks_complete(box):
    archive = make_zip(box.inbox / "slow.whl", [(f"pkg/m{n}.py", b"x = 1\n") for n in range(50)])
    # The child unpacks for real; after the third file it says so and waits to be killed.
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from errdex.extract import archives

        write = archives._Tree.write
        count = 0

        def slow_write(self, *args, **kwargs):
            global count
            write(self, *args, **kwargs)
            count += 1
            if count == 3:
                print("written", flush=True)
                time.sleep(600)

        archives._Tree.write = slow_write
        archives.unpack_archive(
            Path({str(archive)!r}), Path({str(box.target)!r}), limits=archives.ArchiveLimits()
        )
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "written"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()

    assert not box.target.exists()
    (leftover,) = box.target.parent.iterdir()
    assert leftover.name.startswith(".t.") and leftover.name.endswith(".part")
    # The next unpack is unaffected by the leftover.
    result = unpack_archive(archive, box.target, limits=ArchiveLimits())
    assert len(result.files) == 50


def test_ratio_floor_spares_small_repetitive_files(box):
    small = b" " * (RATIO_FLOOR // 2)  # compresses about 1000:1, but is small
    archive = make_zip(box.inbox / "spaces.whl", [("pkg/spaces.py", small)])
    result = box.unpack(archive)
    assert result.files == ("pkg/spaces.py",) and result.problems == ()


# -- through the CLI, as a pypi: source ------------------------------------------------------

METADATA = (
    "Metadata-Version: 2.1\nName: Hostile\nVersion: 1.0\n"
    "Project-URL: Source, https://github.com/example/hostile\n\n"
)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch, clean_environment):
    cache = tmp_path / "cache"
    monkeypatch.setenv("ERRDEX_CACHE_DIR", str(cache))
    return cache


def seed_release(cache_dir: Path, name: str, version: str, filename: str) -> Path:
    """Put a downloaded release in the cache as pip would have left it (no network needed)."""
    entry = cache_dir / "pypi" / f"{name}-{version}"
    entry.mkdir(parents=True)
    return entry / filename


def test_hostile_wheel_mined_as_a_pypi_source_reports_each_refusal(cli, cache_dir, tmp_path):
    wheel = seed_release(cache_dir, "hostile", "1.0", "hostile-1.0-py3-none-any.whl")
    make_zip(
        wheel,
        [
            ("hostile/__init__.py", b""),
            ("hostile/ok.py", BENIGN.encode()),
            ("hostile-1.0.dist-info/METADATA", METADATA.encode()),
            ("../../../../../evil.py", b"evil = 1\n"),
            zip_symlink("hostile/passwd.py", "/etc/passwd"),
        ],
    )
    neighbours = sorted(os.listdir(tmp_path.parent))

    result = cli("mine", "pypi:hostile==1.0", "--json")

    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    (source,) = report["sources"]
    assert source["source"]["repo"] == "example/hostile"
    assert source["source"]["package"] == "hostile"
    assert {p["path"]: p["kind"] for p in report["problems"]} == {
        "../../../../../evil.py": "unsafe-archive",
        "hostile/passwd.py": "unsafe-archive",
    }
    assert report["records"] == 1
    # ../../../../../evil.py from the tree would be tmp_path/evil.py: nothing is there, and
    # nothing but the store sits outside the cache.
    for directory, _, names in os.walk(tmp_path):
        for name in names:
            path = Path(directory, name).relative_to(tmp_path).as_posix()
            assert path.startswith(("cache/", "store.sqlite3")), path
            assert name != "evil.py"
    assert sorted(os.listdir(tmp_path.parent)) == neighbours


def test_wholly_refused_pypi_archive_exits_2_with_one_line(cli, cache_dir):
    wheel = seed_release(cache_dir, "huge", "1.0", "huge-1.0-py3-none-any.whl")
    make_zip(wheel, [("huge/__init__.py", b""), ("huge/big.py", b"x = 1\n")])
    patch_declared_size(wheel, "huge/big.py", 1 << 30)

    result = cli("mine", "pypi:huge==1.0")

    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "pypi:huge==1.0" in lines[0] and "refused" in lines[0] and "cap" in lines[0]


def test_a_wheels_purelib_files_are_mined_where_they_install(box, tmp_path):
    # NAME.data/purelib/pkg/api.py installs as pkg/api.py (tracebacks show that path);
    # NAME.data/scripts are not the package's source.
    archive = make_zip(
        box.inbox / "p-1.0-py3-none-any.whl",
        [
            ("p-1.0.data/purelib/p/api.py", b'raise ValueError("from purelib")\n'),
            ("p-1.0.data/scripts/tool.py", b'raise ValueError("a script")\n'),
            ("p/core.py", b'raise ValueError("from the root")\n'),
        ],
    )
    _, _, report, records = box.mine(archive, tmp_path)
    assert sorted((r.file_path, r.error_message) for r in records) == [
        ("p/api.py", "from purelib"),
        ("p/core.py", "from the root"),
    ]
