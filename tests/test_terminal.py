"""What a terminal and a pipe get: on a pseudo-terminal, live progress on stderr before the
result and lines fitted to the terminal's width; through pipes, the result alone (no progress,
no escape codes) in whole lines."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from puffin_cli.format import PuffinWriter

FILES = 30
# Bounds the reading loop (not a timing assertion: a run that takes longer fails on its output).
DEADLINE = 120.0


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "PUFFIN_DEBUG")}
    return {**env, "TERM": "xterm-256color", **extra}


def on_terminal(*args: str, columns: int = 100, **env: str) -> tuple[int, bytes]:
    """``puffin ARGS`` with standard output and error on one pseudo-terminal of ``columns``
    columns: its exit status and every byte it wrote there, in order."""
    return run_on_terminal([sys.executable, "-m", "puffin_cli", *args], columns, _env(**env))


def run_on_terminal(argv: list[str], columns: int, env: dict[str, str]) -> tuple[int, bytes]:
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=child, stderr=child,
                               env=env)
    os.close(child)
    out = bytearray()
    deadline = time.monotonic() + DEADLINE
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(main, 1 << 16)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            out += chunk
        code = process.wait(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(main)
    return code, bytes(out)


def through_pipes(*args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "puffin_cli", *args], capture_output=True,
                          stdin=subprocess.DEVNULL, env=_env(**env), check=False,
                          timeout=DEADLINE)


@pytest.fixture(scope="module")
def many_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("many")
    for number in range(FILES):
        writer = PuffinWriter(folder / f"f{number:02}.puffin")
        writer.add_blob("x-test", b"abc" * 20, fields=[1])
        writer.finish()
    return folder


RESULTS = [("validate", b"30 files checked"), ("scan", b"scanned 30 ")]


@pytest.mark.parametrize(("command", "result"), RESULTS)
def test_progress_shows_on_a_terminal(many_files: Path, command: str, result: bytes) -> None:
    code, out = on_terminal(command, str(many_files))
    assert code == 0
    summary = out.index(result)
    assert out.index(b"validating") < summary
    assert out.index(f"{FILES}/{FILES}".encode()) < summary


@pytest.mark.parametrize(("command", "result"), RESULTS)
def test_a_pipe_gets_no_progress(many_files: Path, command: str, result: bytes) -> None:
    done = through_pipes(command, str(many_files))
    assert done.returncode == 0
    assert done.stderr == b""
    assert b"\x1b" not in done.stdout and b"validating" not in done.stdout
    assert done.stdout.startswith(result) or b"\n" + result in done.stdout


def test_quiet_shows_no_progress_on_a_terminal(many_files: Path) -> None:
    code, out = on_terminal("validate", "-q", str(many_files))
    assert code == 0
    assert out == b""


def test_the_progress_display_draws_spark_task_counts_on_a_terminal() -> None:
    """What `stats compute` hands Spark's task counts to (render/progress.py, through
    spark/session.run_with_progress): drawn on a terminal's stderr, removed when done."""
    script = ("from puffin_cli.render.progress import ProgressDisplay\n"
              "with ProgressDisplay() as display:\n"
              "    display.phase('computing sketches')\n"
              "    display.advance(3, 8)\n"
              "print('result')\n")
    code, out = run_on_terminal([sys.executable, "-c", script], 100, _env())
    assert code == 0
    assert out.index(b"computing sketches") < out.index(b"3/8") < out.index(b"result")


def test_lines_fit_the_terminal_and_columns_wins() -> None:
    sample = str(Path(__file__).resolve().parents[1] / "samples" / "deletion-vectors.puffin")
    for columns, env, fit in ((60, {}, 60), (200, {"COLUMNS": "70"}, 70)):
        code, out = on_terminal("inspect", sample, columns=columns, NO_COLOR="1", **env)
        assert code == 0
        lines = out.decode().splitlines()
        assert max(len(line) for line in lines) <= fit
        assert any(len(line) > fit - 20 for line in lines)
    done = through_pipes("inspect", sample)
    assert any(len(line) > 80 for line in done.stdout.decode().splitlines())


@pytest.mark.parametrize("group", [[], ["stats"]])
def test_a_group_without_a_command_prints_its_help(group: list[str]) -> None:
    """Bare `puffin` (`puffin stats`): the group's help with its command list on stderr, as
    `--help` shows it, not squashed into an error line; exit status 2 (usage)."""
    path = " ".join(["puffin", *group])
    done = through_pipes(*group)
    assert done.returncode == 2 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert lines[0] == f"Usage: {path} [OPTIONS] COMMAND [ARGS]..."
    assert "Commands:" in lines and "error" not in lines[0]
    commands = lines[lines.index("Commands:") + 1:]
    assert [line.split()[0] for line in commands if line.strip()] == (
        ["compute"] if group else
        ["diff", "dump-blob", "inspect", "repair", "scan", "stats", "table", "validate",
         "write"])
    code, out = on_terminal(*group, NO_COLOR="1")
    assert code == 2
    assert out.decode().splitlines()[0] == f"Usage: {path} [OPTIONS] COMMAND [ARGS]..."
    assert "\nCommands:\r\n" in out.decode()
