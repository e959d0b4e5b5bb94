"""Azurite (Microsoft's Azure Storage emulator, from npm) for the tests: its blob service on
127.0.0.1 (a free port), in memory, telemetry off. ``make setup`` installs it into
``.npm-tools/``. Containers are created and objects read back with plain Shared Key signed
REST requests (the emulator's well-known account), not through the code under test.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

from s3server import free_port, stop_process
from tiers import need

ACCOUNT = "devstoreaccount1"  # Azurite's well-known account and key (public, documented)
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
VERSION = "2021-08-06"
START_TIMEOUT = 30.0
BINARY = Path(__file__).resolve().parents[1] / ".npm-tools" / "node_modules" / ".bin" / \
    "azurite-blob"


@dataclass
class Azurite:
    process: subprocess.Popen[bytes]
    workspace: tempfile.TemporaryDirectory[str]
    port: int

    @property
    def blob_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        return (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
                f"BlobEndpoint={self.blob_endpoint};")

    def request(self, method: str, path: str, query: str = "", body: bytes = b"",
                headers: dict[str, str] | None = None) -> bytes:
        """One Shared Key signed request to ``/<account>/<path>[?query]``."""
        ms = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": VERSION, **(headers or {})}
        resource = f"/{ACCOUNT}/{ACCOUNT}/{path}" + "".join(
            f"\n{k}:{v}" for k, v in sorted(p.split("=", 1) for p in query.split("&") if p))
        ctype = "application/octet-stream" if method == "PUT" else ""
        signed = "\n".join([method, "", "", str(len(body)) if body else "", "", ctype, "", "",
                            "", "", "", ""]) + "\n" + "".join(
            f"{k}:{v}\n" for k, v in sorted(ms.items())) + resource
        signature = base64.b64encode(hmac.new(base64.b64decode(KEY), signed.encode(),
                                              hashlib.sha256).digest()).decode()
        url = f"{self.blob_endpoint}/{path}" + (f"?{query}" if query else "")
        request = urllib.request.Request(url, data=body if method == "PUT" else None,
                                         method=method, headers={
                                             **ms, "Content-Length": str(len(body)),
                                             **({"Content-Type": ctype} if ctype else {}),
                                             "Authorization": f"SharedKey {ACCOUNT}:{signature}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            data: bytes = response.read()
            return data

    def create_container(self, name: str) -> None:
        self.request("PUT", name, "restype=container")

    def put(self, container: str, key: str, data: bytes) -> None:
        self.request("PUT", f"{container}/{key}", body=data,
                     headers={"x-ms-blob-type": "BlockBlob"})

    def get(self, container: str, key: str) -> bytes:
        return self.request("GET", f"{container}/{key}")

    def stop(self) -> None:
        stop_process(self.process)
        self.workspace.cleanup()


def start() -> Azurite:
    need("objectstore", "Azurite")
    if not BINARY.exists():
        raise RuntimeError(f"Azurite is not installed at {BINARY}; run `make setup`")
    port = free_port()
    workspace = tempfile.TemporaryDirectory(prefix="azurite-")
    process = subprocess.Popen([str(BINARY), "--blobHost", "127.0.0.1", "--blobPort", str(port),
                                "--inMemoryPersistence", "--disableTelemetry", "--silent"],
                               cwd=workspace.name, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    server = Azurite(process, workspace, port)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            urllib.request.urlopen(f"{server.blob_endpoint}?comp=list", timeout=2).close()
            break
        except urllib.error.HTTPError:  # answering (an unsigned request is refused)
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError("Azurite did not start") from None
            time.sleep(0.1)
    return server

