"""A real S3-compatible server for the tests: ``moto[server]`` on 127.0.0.1 (a free port), and
a small counting proxy in front of it that records every request the client sends (method,
path, Range, status, body bytes) and can answer the next ones with an error, so the tests
assert requests and bytes from the server's side, not from our own counters.

The proxy records a request before it starts sending the answer, so once a client's call has
returned (its answer was received), the request is already in ``CountingProxy.requests``: a
count read after the command finishes is complete, however busy the machine.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tiers import need

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"
START_TIMEOUT = 30.0
# The instance metadata service (AWS's credential chain asks it when no key is set) at a
# loopback port nothing listens on: the tests never send traffic to the link-local address.
NO_METADATA = {"AWS_METADATA_ENDPOINT": "http://127.0.0.1:1"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    range: str | None
    status: int
    body_bytes: int  # response body bytes the proxy answers with


@dataclass
class CountingProxy:
    """Forwards to ``upstream``; ``requests`` lists what went through, each recorded before
    its answer is sent (see the module's docstring)."""

    upstream: int
    requests: list[Request] = field(default_factory=list)
    # answers for the next requests: a status (a throttling error) or (status, S3 error code)
    failures: list[int | tuple[int, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0
    server: ThreadingHTTPServer | None = None

    def start(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                with proxy.lock:
                    failure = proxy.failures.pop(0) if proxy.failures else None
                if failure is not None:
                    status, code = failure if isinstance(failure, tuple) else (failure,
                                                                               "SlowDown")
                    payload = f"<Error><Code>{code}</Code><Message>{code}</Message></Error>"\
                        .encode()
                    proxy._record(self, status, 0)
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream, timeout=120)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("connection", "transfer-encoding")}
                if body is not None:
                    headers["Content-Length"] = str(len(body))
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                upstream.close()
                proxy._record(self, response.status, 0 if self.command == "HEAD" else len(data))
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding",
                                           "content-length", "server", "date"):
                        self.send_header(key, value)
                # HEAD keeps the object's length; other answers carry their body's.
                self.send_header("Content-Length", response.getheader("Content-Length", "0")
                                 if self.command == "HEAD" else str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _record(self, handler: BaseHTTPRequestHandler, status: int, sent: int) -> None:
        with self.lock:
            self.requests.append(Request(handler.command, handler.path,
                                         handler.headers.get("Range"), status, sent))

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.failures.clear()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@dataclass
class S3Server:
    """A running moto server (``endpoint``) and the proxy in front of it
    (``proxy_endpoint``)."""

    process: subprocess.Popen[bytes]
    endpoint: str
    proxy: CountingProxy

    @property
    def proxy_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.proxy.port}"

    def env(self, endpoint: str | None = None) -> dict[str, str]:
        """Variables a user would set for this server (plus the rest of the environment)."""
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("AWS_", "GOOGLE_", "AZURE_"))}
        return {**keep, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_REGION": REGION, "AWS_ENDPOINT_URL": endpoint or self.endpoint,
                "AWS_EC2_METADATA_DISABLED": "true", **NO_METADATA}

    def client(self, endpoint: str | None = None) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=endpoint or self.endpoint,
                            aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def stop(self) -> None:
        self.proxy.stop()
        stop_process(self.process)


def stop_process(process: subprocess.Popen[Any]) -> None:
    """Stop a test server: SIGTERM, then SIGKILL if it is still there 10 s later."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def start_server() -> S3Server:
    need("objectstore", "the moto S3 server")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                                str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("the moto S3 server did not start") from None
            time.sleep(0.1)
    proxy = CountingProxy(port)
    proxy.start()
    return S3Server(process, endpoint, proxy)


def served() -> Iterator[S3Server]:
    """For a session fixture: the server, stopped at the end."""
    server = start_server()
    try:
        yield server
    finally:
        server.stop()
