"""Headless Chromium (Debian's ``chromium`` package, installed by ``make setup``) for the tests
that load pages: each run has a fresh profile, no background traffic, and every request other
than ``file:`` goes to a refused loopback port, so a page that fetched anything would show
it broken. A missing browser is an error, never a skip.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from s3server import free_port
from tiers import need

TIMEOUT = 120  # seconds per browser run (a loaded 2-core machine starts it slowly)
# How long the page's scripts may run (virtual time: ends as soon as the page is idle).
BUDGET_MS = 10_000


def _binary() -> str:
    found = shutil.which("chromium")
    if found is None:
        raise RuntimeError("chromium is not installed: `make setup` installs Debian's package "
                           "(apt-get install chromium)")
    return found


def _run(url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    need("browser", "Chromium")
    refused = free_port()  # nothing listens there
    with tempfile.TemporaryDirectory(prefix="puffin-chromium-") as profile:
        argv = [_binary(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                f"--proxy-server=127.0.0.1:{refused}", "--proxy-bypass-list=<-loopback>",
                f"--virtual-time-budget={BUDGET_MS}", "--window-size=1280,2400", *extra, url]
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                              check=True, stdin=subprocess.DEVNULL)


def dump_dom(page: Path) -> str:
    """The page's DOM after its scripts ran, serialized."""
    return _run(page.resolve().as_uri(), "--dump-dom").stdout


def screenshot(page: Path, out: Path) -> Path:
    """A 1280 x 2400 PNG of the page after its scripts ran."""
    _run(page.resolve().as_uri(), f"--screenshot={out}")
    if not out.is_file():
        raise RuntimeError(f"chromium wrote no screenshot {out}")
    return out
