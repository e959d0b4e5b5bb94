"""Python side of the judge (spark_scripts/java_judge.py): what Iceberg Java reads from a
table directory, asked of one long-lived Spark 3.5 + Iceberg 1.10.2 process.

    judge = JavaJudge()            # or the ``java_judge`` session fixture (interop.broken)
    report = judge.reads(table_dir)
    report["rows"]                 # [[id, data file, position], ...] or None
    report["planning-error"]       # Java's exception text (causes joined by " <- ") or None
    judge.close()

The report's keys are documented in tests/interop/README.md ("The judge").
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from interop.javaenv import InteropSetupError
from interop.sparkenv import SparkEnv, spark_env

SCRIPT = Path(__file__).resolve().parent / "spark_scripts" / "java_judge.py"
PREFIX = "JUDGE "
MAX_NOISE_LINES = 10_000  # stdout lines Spark may print before a reply


class JavaJudge:
    """One Spark process, started on the first question, answering each in turn."""

    def __init__(self, env: SparkEnv | None = None) -> None:
        self.env = env if env is not None else spark_env()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="puffin-judge-")
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115

    def _reply(self, proc: subprocess.Popen[str], what: str) -> dict[str, Any]:
        assert proc.stdout is not None
        for _ in range(MAX_NOISE_LINES):
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith(PREFIX):
                reply: dict[str, Any] = json.loads(line[len(PREFIX):])
                return reply
        self._stderr.seek(0)
        tail = "\n".join(self._stderr.read().strip().splitlines()[-30:])
        raise InteropSetupError(f"java judge gave no reply to {what} "
                                f"(exit {proc.poll()}):\n{tail}")

    def _process(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            conf = self.env.session_conf(Path(self._scratch.name) / "warehouse")
            self._proc = subprocess.Popen(
                [str(self.env.python), str(SCRIPT), "serve", json.dumps(conf)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                text=True, encoding="utf-8", bufsize=1, env=self.env.environ(),
                cwd=self._scratch.name)
            self._reply(self._proc, "start-up")
        return self._proc

    def reads(self, table: Path) -> dict[str, Any]:
        """What Iceberg Java reads from the file-system table in directory ``table``."""
        with self._lock:
            proc = self._process()
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"table": str(table)}) + "\n")
            proc.stdin.flush()
            return self._reply(proc, str(table))

    def close(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        self._stderr.close()
        self._scratch.cleanup()
