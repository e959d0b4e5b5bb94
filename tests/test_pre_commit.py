"""The pre-commit hook (.pre-commit-hooks.yaml) run by pre-commit itself, as a repository that
keeps Puffin fixtures would run it: pre-commit clones this project at a commit, installs it
into its own environment and runs `puffin validate` on the staged Puffin files.

The hook repository is this project's hooks file, pyproject.toml, README and package copied
into a git repository committed with fixed names and dates, at a fixed place in the interop
cache, so that an unchanged package is the same commit and pre-commit's environment for it
(``PRE_COMMIT_HOME`` beside it) is installed once, not on every run; a changed package is a
new commit, and the environment of the old one is removed first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from interop.javaenv import cache_dir, cache_lock

REPO = Path(__file__).resolve().parents[1]
HOOK_FILES = (".pre-commit-hooks.yaml", "pyproject.toml", "README.md")
FIXED = {"GIT_AUTHOR_NAME": "puffin-cli tests", "GIT_AUTHOR_EMAIL": "tests@localhost",
         "GIT_COMMITTER_NAME": "puffin-cli tests", "GIT_COMMITTER_EMAIL": "tests@localhost",
         "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **FIXED, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True, timeout=120)
    return done.stdout.strip()


def _hook_repo(base: Path) -> tuple[Path, str]:
    """The hook repository at ``base/hooks``, rebuilt from this checkout; its commit."""
    hooks = base / "hooks"
    shutil.rmtree(hooks, ignore_errors=True)
    hooks.mkdir(parents=True)
    for name in HOOK_FILES:
        shutil.copyfile(REPO / name, hooks / name)
    shutil.copytree(REPO / "puffin_cli", hooks / "puffin_cli",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(hooks, "init", "-q", "-b", "main")
    _git(hooks, "add", "-A")
    _git(hooks, "commit", "-q", "-m", "hooks")
    return hooks, _git(hooks, "rev-parse", "HEAD")


pytestmark = pytest.mark.install


@pytest.fixture
def fixtures_repo(tmp_path: Path) -> Path:
    """A repository that keeps a good and a bad Puffin fixture and a README."""
    repo = tmp_path / "fixtures"
    repo.mkdir()
    shutil.copyfile(REPO / "samples" / "stats.puffin", repo / "good.puffin")
    (repo / "bad.stats").write_bytes(b"PFA1" + bytes(30))
    (repo / "README.md").write_text("not a Puffin file\n")
    _git(repo, "init", "-q", "-b", "main")
    return repo


def _pre_commit(repo: Path, home: Path, *files: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--files", *files],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900)


def test_the_hook_passes_good_fixtures_and_fails_bad_ones(fixtures_repo: Path) -> None:
    base = cache_dir() / "pre-commit"
    base.mkdir(exist_ok=True)
    with cache_lock(base):
        hooks, rev = _hook_repo(base)
        home = base / "home"
        marker = base / "rev"
        if not marker.exists() or marker.read_text() != rev:
            shutil.rmtree(home, ignore_errors=True)  # the environment of another commit
            marker.write_text(rev)
        (fixtures_repo / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n"
            "      - id: puffin-validate\n")
        _git(fixtures_repo, "add", "-A")
        good = _pre_commit(fixtures_repo, home, "good.puffin", "README.md")
        assert good.returncode == 0, good.stdout + good.stderr
        assert "puffin validate" in good.stdout and "Passed" in good.stdout
        bad = _pre_commit(fixtures_repo, home, "good.puffin", "bad.stats")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout
    assert "bad.stats" in bad.stdout and "footer.magic" in bad.stdout  # the finding
    assert "2 files checked (profile spec): 1 passed, 1 failed" in bad.stdout
    only_readme = _pre_commit(fixtures_repo, home, "README.md")
    assert only_readme.returncode == 0
    assert "(no files to check)" in only_readme.stdout
