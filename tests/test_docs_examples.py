"""Every ``console`` example in README.md and docs/*.md runs, and prints what it shows; every
``pycon`` example (docs/python.md, README.md) too, as a doctest (tests/doc_examples.py).

A ``console`` block is a transcript: ``$ COMMAND`` lines, each followed by what it prints
(stdout and stderr together, 80 columns, no colour); a ``...`` line stands for any number of
lines, and a command followed by no lines is only run (it must exit 0). Each block runs in a
fresh folder holding the bundled samples (``samples/``) and the files the examples name: a
table ``warehouse/db/orders`` (three snapshots, deletion vectors, Parquet data files without
field IDs), a table ``events`` (two snapshots, a statistics file for the current one),
Paimon BLOB files ``images.blob`` and ``lake/``, ``a.jpg``/``c.jpg`` and a
``truncated.puffin``. Command templates that cannot run here (a Spark cluster) are ``sh``
blocks instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_examples import examples
from doc_examples import run as run_python

from puffin_cli.storage import FileIO

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BIN = str(Path(sys.executable).parent)
_BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    """(where, text) of every console block."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{path.relative_to(REPO)}:{line}", match.group(1)))
    return found


def transcript(text: str) -> list[tuple[str, list[str]]]:
    """(command, expected lines) of a block."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"output before any command: {line!r}"
            steps[-1][1].append(line.rstrip())
    for _, expected in steps:  # a blank line before the next command only separates
        while expected and not expected[-1]:
            expected.pop()
    return steps


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` lines equal ``actual``, a ``...`` line standing for any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def sandbox(root: Path) -> Path:
    """The folder the examples run in (see the module docstring)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tables.synthetic import dv_table

    from puffin_cli.format import paimon_blob as pb

    shutil.copytree(REPO / "samples", root / "samples")
    table = dv_table(root / "warehouse" / "db" / "orders", snapshots=3, dvs_per_snapshot=2,
                     carry=True)
    table.finish()
    for snapshot in range(1, 4):
        for part in range(2):
            path = table.root / "data" / f"part={part}" / f"s{snapshot}-f{part}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            first = (snapshot * 2 + part) * 1000
            pq.write_table(pa.table({"id": pa.array(range(first, first + 1000), pa.int64()),
                                     "part": pa.array([part] * 1000, pa.int32())}), path)
    (root / "a.jpg").write_bytes(bytes(range(256)) * 8)
    (root / "c.jpg").write_bytes(b"\xff\xd8" + b"c" * 957)
    (root / "hello.txt").write_bytes(b"hello")
    (root / "empty.txt").write_bytes(b"")
    (root / "big.bin").write_bytes(b"x" * 5000)
    rows: list[str | pb.Marker] = ["hello.txt", pb.Marker.NULL, pb.Marker.PLACEHOLDER,
                                   "empty.txt", "big.bin"]
    pb.write_blob_file(root / "images.blob", [str(root / r) if isinstance(r, str) else r
                                              for r in rows], fileio=FileIO())
    (root / "lake").mkdir()
    shutil.copy(root / "images.blob", root / "lake" / "part-0.blob")
    (root / "truncated.puffin").write_bytes(b"PFA1" + bytes(23))
    events = dv_table(root / "events", snapshots=2, dvs_per_snapshot=1, carry=True)
    current = events.snapshots[-1]["snapshot-id"]
    events.statistics_file(current, {1: list(range(1000)), 4: [0, 1, 2]})
    events.finish()
    return root


@pytest.mark.parametrize(("where", "text"), blocks(), ids=[w for w, _ in blocks()])
def test_console_example(where: str, text: str, tmp_path: Path) -> None:
    root = sandbox(tmp_path)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "80", "NO_COLOR": "1", "FORCE_COLOR": ""}
    for command, expected in transcript(text):
        done = subprocess.run(["bash", "-c", command], cwd=root, env=env, check=False,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=120)
        actual = [line.rstrip() for line in done.stdout.splitlines()]
        if not expected:
            assert done.returncode == 0, f"{where}: $ {command}\n{done.stdout}"
            continue
        assert matches(expected, actual), (
            f"{where}: $ {command}\nexpected:\n" + "\n".join(expected) + "\nactual:\n"
            + "\n".join(actual))


@pytest.mark.parametrize("doc", [d for d in DOCS if examples(d)],
                         ids=[str(d.relative_to(REPO)) for d in DOCS if examples(d)])
def test_python_examples(doc: Path, tmp_path: Path) -> None:
    """The ``pycon`` examples of a document, as one doctest in the examples' folder."""
    tried, failed, report = run_python(doc, sandbox(tmp_path))
    assert tried > 0
    assert failed == 0, report


def test_every_performance_figure_names_the_bench_module_that_produces_it() -> None:
    """Each row of the README's Performance table names, in its module column, an existing
    ``benchmarks/bench_NAME.py`` (``make bench`` prints every module's figures)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Performance", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in table.splitlines()
            if line.startswith("| ") and not line.startswith(("| what ", "|---"))]
    assert len(rows) >= 10
    modules = {p.stem.removeprefix("bench_") for p in (REPO / "benchmarks").glob("bench_*.py")}
    assert [r[0] for r in rows if len(r) != 4 or r[2].strip("`") not in modules] == []
