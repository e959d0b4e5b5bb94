"""Python side of the Iceberg Java oracle (tests/interop/java/PuffinOracle.java).

One long-lived JVM in ``batch`` mode serves every call, so a test suite can make hundreds of
calls for the price of one JVM start. See tests/interop/README.md for the JSON shapes.
"""

from __future__ import annotations

import base64
import json
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from interop.javaenv import JavaEnv, java_env


class OracleError(RuntimeError):
    """Iceberg Java rejected a request (the message is Java's exception text)."""


class JavaOracle:
    """Iceberg Java's view of Puffin files: read, write, and build Theta sketches."""

    def __init__(self, env: JavaEnv | None = None) -> None:
        self.env = env if env is not None else java_env()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115

    def _process(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                self.env.oracle_command("batch"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                encoding="utf-8",
                bufsize=1,
            )
        return self._proc

    def call(self, request: dict[str, Any]) -> Any:
        """Send one batch command; return its ``result`` or raise OracleError."""
        with self._lock:
            proc = self._process()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        if not line:
            self._stderr.seek(0)
            raise OracleError(
                f"Java oracle exited (code {proc.poll()}) on {request.get('cmd')}: "
                + self._stderr.read()[-2000:]
            )
        response = json.loads(line)
        if not response["ok"]:
            raise OracleError(f"Iceberg Java failed on {request.get('cmd')}: {response['error']}")
        return response["result"]

    def read(self, path: str | Path) -> dict[str, Any]:
        """What Iceberg Java reads from a Puffin file (never raises for a bad file: see
        ``java_accepted`` / ``java_errors`` and per-blob ``*_error`` keys)."""
        result: dict[str, Any] = self.call({"cmd": "read", "path": str(path)})
        return result

    def write(self, spec: dict[str, Any], out: str | Path) -> dict[str, Any]:
        """Write ``out`` with Iceberg's PuffinWriter (or BaseDVFileWriter) from a spec dict."""
        result: dict[str, Any] = self.call({"cmd": "write", "spec": spec, "out": str(out)})
        return result

    def theta_build_file(
        self, values: list[bytes], output: str | Path, partitions: list[int] | None = None
    ) -> dict[str, Any]:
        """Build a sketch as Iceberg's ThetaSketchAgg into ``output``; return the summary.

        ``values`` are the already-serialized bytes of each value. ``partitions`` optionally
        gives indexes into ``values`` where a new Spark partition starts."""
        starts = set(partitions or [])
        with tempfile.NamedTemporaryFile(suffix=".values", delete=False) as handle:
            for i, value in enumerate(values):
                if i in starts and i > 0:
                    handle.write((-1).to_bytes(4, "big", signed=True))
                handle.write(len(value).to_bytes(4, "big") + value)
            input_path = handle.name
        try:
            result: dict[str, Any] = self.call(
                {"cmd": "theta-build", "input": input_path, "output": str(output)}
            )
        finally:
            Path(input_path).unlink()
        return result

    def theta_build(self, values: list[bytes], partitions: list[int] | None = None) -> bytes:
        """Sketch bytes exactly as Iceberg's ThetaSketchAgg writes them for these values."""
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "sketch.bin"
            self.theta_build_file(values, out, partitions)
            return out.read_bytes()

    def serialize(self, type_text: str, values: list[str | None]) -> list[bytes | None]:
        """Iceberg's single-value serialization of text ``values`` of an Iceberg type, as Java
        parses them (``None`` stays ``None``); see ``serialize`` in the README."""
        result = self.call({"cmd": "serialize", "type": type_text, "values": values})
        return [None if v is None else base64.b64decode(v) for v in result]

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                if self._proc.stdin is not None:
                    self._proc.stdin.close()
                self._proc.wait(timeout=30)
                if self._proc.stdout is not None:
                    self._proc.stdout.close()
                self._proc = None
            self._stderr.close()
