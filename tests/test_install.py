"""The package as a user installs it (README "Install"): a wheel built from the source tree (a
copy of it: the build writes beside its sources), installed in a fresh venv (not editable),
where `puffin --version`, a command and docs/python.md's examples run.

The wheel's dependencies come from a wheelhouse in the interop cache (``pip download``, once
per set of requirements and Python version), so a later run installs offline; the venv is new
every time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from interop.javaenv import cache_dir, cache_lock
from test_docs_examples import sandbox

import puffin_cli

pytestmark = pytest.mark.install

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 900  # a guard against a hang only: the first download may be slow


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run in ``cwd``, never the checkout (``python -c`` imports from its folder), and without
    PYTHONPATH: what runs is the installed package."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False, stdin=subprocess.DEVNULL, env=env)
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done


def _build_wheel(work: Path) -> Path:
    source = work / "src"
    source.mkdir()
    shutil.copytree(REPO / "puffin_cli", source / "puffin_cli",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist",
         f"./{source.name}", cwd=work)
    [wheel] = (work / "dist").glob("puffin_cli-*.whl")
    return wheel


def _metadata(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return archive.read(name).decode().splitlines()


def _wheelhouse(wheel: Path, requirements: list[str]) -> Path:
    """The wheels of ``requirements`` (the wheel's own), downloaded once per set of them."""
    key = hashlib.sha256("\n".join([sys.version, *requirements]).encode()).hexdigest()[:16]
    base = cache_dir() / "install-wheelhouse"
    base.mkdir(exist_ok=True)
    house = base / key
    with cache_lock(base):
        if not (house / ".complete").is_file():
            shutil.rmtree(house, ignore_errors=True)
            _run(sys.executable, "-m", "pip", "download", "-q", "-d", house, wheel, cwd=base)
            for ours in house.glob("puffin_cli-*.whl"):
                ours.unlink()
            (house / ".complete").write_text(key + "\n")
    return house


def test_the_wheel_installs_in_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    metadata = _metadata(wheel)
    requires = [line.split(": ", 1)[1] for line in metadata if line.startswith("Requires-Dist")]
    # `pip install '.[spark,catalog]'` (README): the extras name the Spark and catalog stacks
    assert {"Provides-Extra: spark", "Provides-Extra: catalog"} <= set(metadata)
    assert any(r.startswith("pyspark") and 'extra == "spark"' in r for r in requires)
    assert any(r.startswith("pyiceberg") and 'extra == "catalog"' in r for r in requires)
    assert not any(r.startswith(("pyspark", "pyiceberg")) and "extra ==" not in r
                   for r in requires)
    # not the tests, nor anything else beside the package
    with zipfile.ZipFile(wheel) as archive:
        tops = {n.split("/", 1)[0] for n in archive.namelist()}
    assert tops == {"puffin_cli", wheel.name.split("-")[0] + "-" + puffin_cli.__version__
                    + ".dist-info"}

    house = _wheelhouse(wheel, [r for r in requires if "extra ==" not in r])
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python, puffin = venv / "bin" / "python", venv / "bin" / "puffin"
    _run(python, "-m", "pip", "install", "-q", "--no-index", "--find-links", house, wheel,
         cwd=tmp_path)

    version = _run(puffin, "--version", cwd=tmp_path)
    assert version.stdout == f"puffin, version {puffin_cli.__version__}\n"
    where = _run(python, "-c", "import puffin_cli, sys; print(puffin_cli.__file__); "
                 "import puffin_cli.api; print('pyspark' in sys.modules)", cwd=tmp_path)
    assert where.stdout.splitlines() == [
        str(venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages" / "puffin_cli" / "__init__.py"), "False"]
    root = sandbox(tmp_path / "examples")
    checked = _run(puffin, "validate", "samples/stats.puffin", cwd=root)
    assert "1 passed" in checked.stdout
    examples = _run(python, REPO / "tests" / "doc_examples.py", REPO / "docs" / "python.md",
                    root, cwd=root)
    assert examples.stdout.splitlines()[-1].endswith(" examples, 0 failed"), examples.stdout
