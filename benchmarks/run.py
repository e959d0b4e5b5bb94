"""`make bench`: run every benchmarks/bench_*.py module and print its figures.

Each module defines ``run(tmpdir: pathlib.Path) -> list[tuple[str, float, str]]`` returning
(name, value, unit) rows; ratios are measured against a baseline in the same run, so they
mean something on a noisy machine. ``python benchmarks/run.py NAME...`` runs only the modules
whose name contains one of the NAMEs.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    modules = sorted(HERE.glob("bench_*.py"))
    if argv:
        modules = [m for m in modules if any(word in m.stem for word in argv)]
    sys.path.insert(0, str(HERE))
    for path in modules:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(f"== {path.stem}", flush=True)
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"puffin-{path.stem}-") as tmp:
            for name, value, unit in module.run(Path(tmp)):
                print(f"  {name:<58} {value:>14,.3f} {unit}", flush=True)
        print(f"  ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
