"""The storage layer on local files: non-regular inputs refused at once, stream inputs from
pipes, symlink loops, create-only outputs that never replace special files, and the rule that
no other module opens, lists or writes files."""

from __future__ import annotations

import ast
import glob as pyglob
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO, StorageError, default_io

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
STATS = SAMPLES / "stats.puffin"
DV = SAMPLES / "deletion-vectors.puffin"
TIMEOUT = 60
NOT_REGULAR = "cannot open: a FIFO, not a regular file (this input needs random access)"


def puffin(*args: str, stdin: bytes | None = None, cwd: Path | None = None
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "puffin_cli", *args], input=stdin,
                          capture_output=True, timeout=TIMEOUT, check=False, cwd=cwd,
                          text=stdin is None)


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A bash command line (for process substitution), ``puffin`` being this checkout's."""
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False, cwd=cwd,
                          env={**os.environ, "PUFFIN": f"{sys.executable} -m puffin_cli"})


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.puffin"
    os.mkfifo(path)
    return path


# --- inputs that need random access -----------------------------------------------------------


@pytest.mark.parametrize("command", [
    ("inspect", "{fifo}"), ("inspect", "--json", "--no-decode", "{fifo}"),
    ("dump-blob", "{fifo}", "0"), ("write", "{out}", "--copy-blob", "{fifo}:0"),
])
def test_fifo_is_refused_at_once(fifo: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    args = [a.format(fifo=fifo, out=tmp_path / "out.puffin") for a in command]
    done = puffin(*args)
    assert (done.returncode, done.stderr) == (1, f"puffin: error: {fifo}: {NOT_REGULAR}\n")
    if "--json" in args:
        assert '"code":"io.not-regular"' in done.stdout.replace(" ", "")
    assert not (tmp_path / "out.puffin").exists()


def test_fifo_in_validate_is_a_finding(fifo: Path) -> None:
    done = puffin("validate", "--json", str(fifo))
    assert done.returncode == 1
    assert '"code":"file.open"' in done.stdout.replace(" ", "") and NOT_REGULAR in done.stdout


def test_fifo_matched_by_a_glob_is_refused(fifo: Path, tmp_path: Path) -> None:
    done = puffin("inspect", str(tmp_path / "*.puffin"))
    # a glob is the shell's business for inspect; validate expands its own
    assert done.returncode == 1
    done = puffin("validate", "--json", str(tmp_path / "*.puffin"))
    assert done.returncode == 1 and NOT_REGULAR in done.stdout


def test_fifo_parquet_input_is_refused(fifo: Path, tmp_path: Path) -> None:
    parquet = tmp_path / "d.parquet"
    os.mkfifo(parquet)
    done = puffin("write", str(tmp_path / "out.puffin"), "--from-parquet", str(parquet))
    assert done.returncode == 1
    assert done.stderr.startswith("puffin: error: ") and done.stderr.count("\n") == 1
    assert "not a regular file" in done.stderr


def test_character_device_is_refused() -> None:
    done = puffin("inspect", "/dev/zero")
    assert (done.returncode, done.stderr) == (
        1, "puffin: error: /dev/zero: cannot open: a character device, not a regular file "
           "(this input needs random access)\n")


def test_input_file_refuses_without_blocking(fifo: Path) -> None:
    with pytest.raises(StorageError) as info:
        default_io().new_input(fifo)
    assert (info.value.code, info.value.message) == ("io.not-regular", NOT_REGULAR)


# --- inputs read as streams -------------------------------------------------------------------


def test_positions_and_values_from_process_substitution(tmp_path: Path) -> None:
    done = shell('$PUFFIN write piped.puffin --created-by t --dv d.parquet '
                 '--positions-file <(printf "1\\n3-5\\n") --theta 1 --type long '
                 '--values-file <(seq 1 1000)', tmp_path)
    assert done.returncode == 0, done.stderr
    (tmp_path / "p.txt").write_text("1\n3-5\n")
    (tmp_path / "v.txt").write_text("".join(f"{i}\n" for i in range(1, 1001)))
    done = shell("$PUFFIN write plain.puffin --created-by t --dv d.parquet --positions-file "
                 "p.txt --theta 1 --type long --values-file v.txt", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "piped.puffin").read_bytes() == (tmp_path / "plain.puffin").read_bytes()


def test_spec_from_standard_input(tmp_path: Path) -> None:
    spec = b'{"blobs": [{"dv": {"referenced-data-file": "d.parquet", "positions": [1, 2]}}]}'
    done = puffin("write", str(tmp_path / "s.puffin"), "--spec", "-", stdin=spec)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "s.puffin").exists()


def test_files_from_process_substitution(tmp_path: Path) -> None:
    done = shell(f"$PUFFIN scan --json --files-from <(echo {STATS}; echo {DV})", tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"] == 2


def test_long_values_stream_stays_bounded(tmp_path: Path) -> None:
    """Three million values through a pipe: parsed and hashed in chunks (peak RSS of the
    child, a generous bound)."""
    script = ("import resource, subprocess, sys\n"
              "done = subprocess.run(sys.argv[1:], check=False, close_fds=False)\n"
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
              "sys.exit(done.returncode)")
    done = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -c "$0" "{sys.executable}" -m puffin_cli write '
                       'big.puffin --theta 1 --type long --values-file <(seq 1 3000000)',
         script], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    peak_kib = int(done.stdout.split()[-1])
    assert peak_kib < 512 * 1024
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0


# --- symlink loops ----------------------------------------------------------------------------


@pytest.fixture
def looped(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.puffin").write_bytes(STATS.read_bytes())
    (root / "a" / "b" / "up").symlink_to("../..")  # a loop back to the root
    (root / "self").symlink_to(".")
    (root / "l1").symlink_to("l2")  # a loop of links to nothing
    (root / "l2").symlink_to("l1")
    return root


def test_directory_walk_with_symlink_loops(looped: Path) -> None:
    done = puffin("validate", "--json", str(looped))
    assert done.returncode == 0, done.stderr
    assert [f["path"] for f in json.loads(done.stdout)["files"]] == [
        f"{looped}/a/b/x.puffin"]


@pytest.mark.parametrize("pattern", ["**/*.puffin", "**/x.puffin", "*/**/*.puffin"])
def test_recursive_glob_with_symlink_loops(looped: Path, pattern: str) -> None:
    found = default_io().glob(f"{looped}/{pattern}")
    assert found and len(found) == len(set(found))
    assert all(p.endswith("x.puffin") for p in found)
    done = puffin("validate", "--quiet", f"{looped}/{pattern}")
    assert done.returncode == 0, done.stderr


def test_glob_matches_python_glob_without_loops(tmp_path: Path) -> None:
    for name in ("a/x.puffin", "a/.hidden.puffin", "a/b/y.stats", "c.puffin", ".h/z.puffin",
                 "a/b/c/d.puffin"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    for pattern in ("**/*.puffin", "*/*.puffin", "a/?/*", "[ac]*", "a/.*",
                    "**/b/*.stats"):
        full = f"{tmp_path}/{pattern}"
        assert default_io().glob(full) == sorted(pyglob.glob(full, recursive=True)), pattern


# --- outputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ("dump-blob", str(STATS), "0", "-o", "{out}"),
    ("scan", str(STATS), "-o", "{out}"),
    ("write", "{out}", "--dv", "d.parquet", "--positions", "1"),
])
def test_outputs_replace_files_only_with_force(tmp_path: Path, command: tuple[str, ...]) -> None:
    out = tmp_path / "out.bin"
    out.write_bytes(b"precious")
    args = [a.format(out=out) for a in command]
    done = puffin(*args)
    assert (done.returncode, done.stderr) == (
        1, f"puffin: error: {out}: exists; use --force to overwrite it\n")
    assert out.read_bytes() == b"precious"
    forced = puffin(*args, "--force")
    assert forced.returncode == 0, forced.stderr
    assert out.read_bytes() != b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


@pytest.mark.parametrize("command", [
    ("dump-blob", str(STATS), "0", "-o", "{out}", "--force"),
    ("scan", str(STATS), "-o", "{out}", "--force"),
    ("write", "{out}", "--force", "--dv", "d.parquet", "--positions", "1"),
])
def test_outputs_never_replace_a_fifo(fifo: Path, command: tuple[str, ...]) -> None:
    done = puffin(*[a.format(out=fifo) for a in command])
    assert (done.returncode, done.stderr) == (
        1, f"puffin: error: {fifo}: a FIFO is there, not a regular file; never replacing it\n")
    assert fifo.is_fifo()
    assert sorted(p.name for p in fifo.parent.iterdir()) == [fifo.name]


def test_outputs_never_replace_a_device() -> None:
    done = puffin("dump-blob", str(STATS), "0", "-o", "/dev/null", "--force")
    assert (done.returncode, done.stderr) == (
        1, "puffin: error: /dev/null: a character device is there, not a regular file; never "
           "replacing it\n")


def test_aborted_output_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "x.bin"
    with pytest.raises(RuntimeError), default_io().new_output(target).create() as out:
        out.write(b"partial")
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
    with default_io().new_output(target).create() as out:
        out.write(b"whole")
    assert target.read_bytes() == b"whole"


def test_file_io_pickles_as_its_properties() -> None:
    import pickle

    io = FileIO({"s3.region": "eu-west-1"})
    copy = pickle.loads(pickle.dumps(io))
    assert copy.properties == {"s3.region": "eu-west-1"}
    assert copy.with_properties({"s3.endpoint": "http://x"}).properties == {
        "s3.region": "eu-west-1", "s3.endpoint": "http://x"}


def test_unknown_io_property_is_a_usage_error() -> None:
    done = puffin("inspect", "--io", "s3.endpoint=http://127.0.0.1:1", "--io", "endpoint=x",
                  str(STATS))
    assert done.returncode == 2
    assert "'endpoint' is not a FileIO property" in done.stderr


def test_read_all_refuses_more_than_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    assert default_io().read_all(path, 5) == b"12345"
    with pytest.raises(PuffinError, match="larger than the limit of 4 bytes"):
        default_io().read_all(path, 4)
# --- the layer rule ---------------------------------------------------------------------------

# Calls that open, list, write or rename files; only puffin_cli/storage may make them.
FORBIDDEN = {"open", "os.open", "os.fdopen", "os.walk", "os.scandir", "os.listdir",
             "os.replace", "os.rename", "os.link", "os.unlink", "os.remove", "glob.glob",
             "glob.iglob", "tempfile.mkstemp", "shutil.copy", "shutil.move", "os.stat",
             "os.lstat", "os.path.isfile", "os.path.isdir", "os.path.exists",
             "os.path.getsize", "os.makedirs", "os.mkdir"}
METHODS = {"read_bytes", "read_text", "write_bytes", "write_text", "iterdir", "rglob",
           "is_file", "is_dir", "exists", "mkdir", "unlink"}
# Not file I/O of the data: the file-system commit protocol's lock and hard links (a local
# table only), stdout redirected to /dev/null, and the HTML page's script and style, package
# data shipped inside puffin_cli (importlib.resources), never a user's location.
ALLOWED = {("puffin_cli/cli/main.py", "os.open"), ("puffin_cli/spark/session.py", "os.open"),
           ("puffin_cli/render/html.py", ".read_text")}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def test_only_the_storage_layer_touches_files() -> None:
    found = []
    for path in sorted((ROOT / "puffin_cli").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("puffin_cli/storage/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            method = name.rsplit(".", 1)[-1]
            if (name in FORBIDDEN or (method in METHODS and "." in name)) \
                    and (relative, name) not in ALLOWED:
                found.append(f"{relative}:{node.lineno}: {name}")
    assert found == []


def test_table_metadata_and_manifests_that_are_fifos_are_refused(tmp_path: Path) -> None:
    from tables.synthetic import dv_table

    root = tmp_path / "t"
    dv_table(root, snapshots=1, dvs_per_snapshot=1, carry=False).finish()
    fifo = root / "metadata" / "v2.metadata.json"
    os.mkfifo(fifo)
    done = puffin("table", str(fifo))
    assert (done.returncode, done.stderr) == (1, f"puffin: error: {fifo}: {NOT_REGULAR}\n")
    os.unlink(fifo)
    manifest_list = next((root / "metadata").glob("snap-*.avro"))
    manifest_list.unlink()
    os.mkfifo(manifest_list)
    done = puffin("table", str(root))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert done.stderr.endswith(f"{NOT_REGULAR}\n"), done.stderr


def test_a_name_no_file_can_have_is_one_clear_error(tmp_path: Path) -> None:
    """A lone UTF-16 surrogate (as a table's metadata may hold in its location) is no file
    name: refused as such, where the operating system call would raise a UnicodeEncodeError
    (exit 3). Undecodable bytes of a real name (surrogate-escaped) are still a name."""
    with pytest.raises(StorageError) as err:
        default_io().stat("t\ud800/metadata")
    assert (err.value.code, err.value.message) == (
        "io.uri", "not a usable file name (it holds a lone surrogate character)")
    # a NUL (a manifest list naming "\x00" as a manifest): the OS call raised ValueError
    with pytest.raises(StorageError) as err:
        default_io().stat("m\x00.avro")
    assert (err.value.code, err.value.message) == (
        "io.uri", "not a usable file name (it holds a NUL character)")
    escaped = os.fsdecode(bytes(tmp_path) + b"/\xff.puffin")
    Path(escaped).write_bytes(b"x")
    found = default_io().stat(escaped)
    assert found is not None and found.size == 1
    done = subprocess.run([sys.executable, "-c", "from puffin_cli.cli.main import main; "
                           "main(['table', 't\\ud800'])"], capture_output=True, check=False)
    assert (done.returncode, done.stderr) == (
        1, b"puffin: error: t\\ud800: not a usable file name (it holds a lone surrogate "
           b"character)\n")


def test_delete_removes_a_file_and_a_missing_one_is_no_error(tmp_path: Path) -> None:
    target = tmp_path / "m.avro"
    target.write_bytes(b"x")
    fileio = FileIO()
    fileio.delete(str(target))
    assert not target.exists()
    fileio.delete(str(target))  # already gone: as an object store answers
    fileio.delete(target.as_uri())  # a file: URI names the same file
    (tmp_path / "d").mkdir()
    with pytest.raises(StorageError) as caught:
        fileio.delete(str(tmp_path / "d"))
    assert caught.value.code == "io.delete"
    assert (tmp_path / "d").is_dir()


# --- reads of many ranges -------------------------------------------------------------------


def test_coalesce_groups_neighbours_in_their_order() -> None:
    from puffin_cli.storage import coalesce

    assert coalesce([(0, 4), (4, 4), (10, 2), (0, 1), (1, 0), (3, 3)], gap=2, span=100) == [
        [(0, 4), (4, 4), (10, 2)], [(0, 1), (3, 3)]]  # no going back; empty ranges left out
    assert coalesce([(0, 4), (7, 4)], gap=2, span=100) == [[(0, 4)], [(7, 4)]]  # gap of 3
    assert coalesce([(0, 4), (4, 4), (8, 4)], gap=0, span=8) == [[(0, 4), (4, 4)], [(8, 4)]]
    assert coalesce([(0, 20), (20, 1)], gap=0, span=8) == [[(0, 20)], [(20, 1)]]


def test_prefetched_ranges_cost_one_read_and_stay_exact(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import record_local_reads

    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * 4)
    recorded = record_local_reads(monkeypatch)

    def reads() -> list[tuple[int, int]]:
        return [(offset, length) for _path, offset, length in recorded]

    data = path.read_bytes()
    planned = [(10, 5), (15, 20), (100, 3), (900, 24)]
    with default_io().new_input(path) as source:
        source.prefetch(planned)
        assert [source.read(o, n) for o, n in planned] == [data[o:o + n] for o, n in planned]
        assert reads() == [(10, 914)]
        assert (source.reads, source.bytes_read) == (1, 914)
        # read again, out of the plan's order, or outside it: each a read of its own
        assert source.read(15, 20) == data[15:35] and source.read(0, 2) == data[:2]
        assert reads()[1:] == [(15, 20), (0, 2)]
        recorded.clear()
        source.prefetch(planned)
        assert source.read(100, 3) == data[100:103]  # the span, for a range in its middle
        assert source.read(10, 5) == data[10:15]  # from the span held
        assert source.read(15, 20) == data[15:35] and source.read(900, 24) == data[900:924]
        assert source.read(15, 20) == data[15:35]  # the span was dropped: a read of its own
        assert reads() == [(10, 914), (15, 20)]


def test_a_span_that_cannot_be_read_leaves_each_range_its_own_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from puffin_cli.storage.local import LocalInput

    path = tmp_path / "f"
    path.write_bytes(bytes(100))
    original = LocalInput._read

    def failing(self: LocalInput, offset: int, length: int) -> bytes:
        if offset <= 50 < offset + length:
            raise StorageError("cannot read: Input/output error", code="io.read",
                               path=self.location, offset=offset)
        return original(self, offset, length)

    monkeypatch.setattr(LocalInput, "_read", failing)
    with default_io().new_input(path) as source:
        source.prefetch([(0, 10), (45, 10), (90, 10)])
        assert source.read(0, 10) == bytes(10)
        with pytest.raises(StorageError) as info:
            source.read(45, 10)
        assert (info.value.code, info.value.offset) == ("io.read", 45)
        assert source.read(90, 10) == bytes(10)
