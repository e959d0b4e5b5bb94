"""Build the Iceberg Java side of the interop tier: jars, Jackson relocation, the oracle program.

Everything is cached under ``PUFFIN_INTEROP_CACHE`` (default ``~/.cache/puffin-cli-interop``) and
every step is idempotent: a second call finds its outputs and does nothing. Failures raise
:class:`InteropSetupError` with one clear message; the tier must fail in CI, never skip.
See tests/interop/README.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tiers import need

ICEBERG_JAR_NAME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
ICEBERG_PYPI_PACKAGE = "snowpark-connect-deps-iceberg==1.0.3"
PYSPARK_PYPI_PACKAGE = "pyspark==3.5.9"
# Jars taken from the pyspark sdist (pyspark-3.5.x/deps/jars/), by file-name prefix.
JACKSON_JARS = ("jackson-core-2.15.", "jackson-databind-2.15.", "jackson-annotations-2.15.")
SLF4J_JAR = "slf4j-api-2."
_JAVA = Path(__file__).resolve().parent / "java"
# The oracle (Iceberg's Puffin reader and writer) and a REST catalog server (Iceberg's REST
# handlers over a catalog of Iceberg's metastore classes), compiled together.
JAVA_SOURCES = (_JAVA / "PuffinOracle.java", _JAVA / "PuffinRestCatalog.java")
ORACLE_MAIN_CLASS = "PuffinOracle"
REST_CATALOG_MAIN_CLASS = "org.apache.iceberg.rest.PuffinRestCatalog"

_JACKSON_FROM = "com/fasterxml/jackson/"
_JACKSON_TO = "org/apache/iceberg/shaded/com/fasterxml/jackson/"
RELOCATED_JACKSON_NAME = "iceberg-shaded-jackson-2.15-relocated.jar"
# Bump when the relocation code changes, so a stale relocated jar is rebuilt.
_RELOCATION_VERSION = "1"


class InteropSetupError(RuntimeError):
    """The Java interop environment could not be built (never a reason to skip)."""


@dataclass(frozen=True)
class JavaEnv:
    """Everything needed to run Iceberg Java's Puffin code and the compiled oracle."""

    cache_dir: Path
    iceberg_runtime_jar: Path
    relocated_jackson_jar: Path
    slf4j_jar: Path
    oracle_classes_dir: Path
    java: str

    @property
    def library_jars(self) -> list[Path]:
        """Jars to add next to Iceberg's runtime jar (e.g. Spark's --jars)."""
        return [self.relocated_jackson_jar, self.slf4j_jar]

    @property
    def classpath(self) -> str:
        parts = [self.oracle_classes_dir, self.iceberg_runtime_jar, *self.library_jars]
        return os.pathsep.join(str(p) for p in parts)

    def oracle_command(self, *args: str) -> list[str]:
        return [self.java, "-Xss4m", "-cp", self.classpath, ORACLE_MAIN_CLASS, *args]

    def rest_catalog_command(self, warehouse: Path, *vended: str) -> list[str]:
        """The REST catalog server over ``warehouse``; each ``KEY=VALUE`` of ``vended`` is in
        every table's loadTable config."""
        return [self.java, "-cp", self.classpath, REST_CATALOG_MAIN_CLASS, str(warehouse),
                *vended]


def cache_dir() -> Path:
    raw = os.environ.get("PUFFIN_INTEROP_CACHE")
    base = Path(raw).expanduser() if raw else Path.home() / ".cache" / "puffin-cli-interop"
    base.mkdir(parents=True, exist_ok=True)
    return base


@contextlib.contextmanager
def cache_lock(cache: Path) -> Iterator[None]:
    """Serialize builders (parallel pytest workers, concurrent sessions) on one cache dir."""
    with open(cache / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_checked(cmd: list[str], what: str) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise InteropSetupError(f"interop setup: cannot run {cmd[0]!r} ({what}): {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise InteropSetupError(
            f"interop setup: {what} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            + "\n".join(tail)
        )
    return proc


def _pip_download(requirement: str, dest: Path) -> Path:
    """``pip download --no-deps`` into dest (once); return the single downloaded archive."""
    dest.mkdir(parents=True, exist_ok=True)
    archives = sorted(p for p in dest.iterdir() if p.suffix in (".whl", ".gz"))
    if not archives:
        run_checked(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                "-d",
                str(dest),
                requirement,
            ],
            f"pip download {requirement}",
        )
        archives = sorted(p for p in dest.iterdir() if p.suffix in (".whl", ".gz"))
    if len(archives) != 1:
        raise InteropSetupError(
            f"interop setup: expected one archive for {requirement} in {dest}, found "
            f"{[a.name for a in archives]}"
        )
    return archives[0]


def _atomic_write(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)


def iceberg_runtime_jar(cache: Path) -> Path:
    """Iceberg's Spark runtime jar: ``ICEBERG_RUNTIME_JAR`` or extracted from the PyPI package."""
    override = os.environ.get("ICEBERG_RUNTIME_JAR")
    if override:
        jar = Path(override).expanduser()
        if not jar.is_file():
            raise InteropSetupError(f"ICEBERG_RUNTIME_JAR={override}: no such file")
        return jar
    target = cache / "jars" / ICEBERG_JAR_NAME
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    wheel = _pip_download(ICEBERG_PYPI_PACKAGE, cache / "downloads" / "iceberg")
    with zipfile.ZipFile(wheel) as zf:
        members = [n for n in zf.namelist() if n.endswith("/" + ICEBERG_JAR_NAME)]
        if len(members) != 1:
            raise InteropSetupError(
                f"interop setup: {wheel.name} has no single {ICEBERG_JAR_NAME} (found {members})"
            )
        _atomic_write(target, zf.read(members[0]))
    return target


def pyspark_sdist(cache: Path) -> Path:
    """The pyspark 3.5 source archive (PyPI ships pyspark 3.5 only as an sdist)."""
    return _pip_download(PYSPARK_PYPI_PACKAGE, cache / "downloads" / "pyspark")


def pyspark_jars(cache: Path) -> dict[str, Path]:
    """Jackson 2.15 (core, databind, annotations) and slf4j-api jars out of the pyspark sdist."""
    out_dir = cache / "jars" / "pyspark"
    wanted = (*JACKSON_JARS, SLF4J_JAR)
    found = {p: j for p in wanted for j in out_dir.glob(p + "*.jar")} if out_dir.is_dir() else {}
    if len(found) == len(wanted):
        return found
    out_dir.mkdir(parents=True, exist_ok=True)
    sdist = pyspark_sdist(cache)
    with tarfile.open(sdist) as tf:
        for member in tf.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            prefix = next((p for p in wanted if name.startswith(p) and name.endswith(".jar")), None)
            if prefix is None or "/jars/" not in member.name:
                continue
            extracted = tf.extractfile(member)
            if extracted is None:
                continue
            _atomic_write(out_dir / name, extracted.read())
            found[prefix] = out_dir / name
    missing = [p for p in wanted if p not in found]
    if missing:
        raise InteropSetupError(f"interop setup: {sdist.name} lacks jars {missing}")
    return found


# --- Jackson relocation ---------------------------------------------------------------------

_CP_SIZES = {
    3: 4,
    4: 4,
    5: 8,
    6: 8,
    7: 2,
    8: 2,
    9: 4,
    10: 4,
    11: 4,
    12: 4,
    15: 3,
    16: 2,
    17: 4,
    18: 4,
    19: 2,
    20: 2,
}


def _relocate_text(data: bytes) -> bytes:
    """Rewrite Jackson package names in slash (and descriptor) form and in dotted form."""
    for old, new in (
        (_JACKSON_FROM, _JACKSON_TO),
        (_JACKSON_FROM.replace("/", "."), _JACKSON_TO.replace("/", ".")),
    ):
        if old.encode() in data and new.encode() not in data:
            data = data.replace(old.encode(), new.encode())
    return data


def relocate_class(data: bytes) -> bytes:
    """Relocate one class file by rewriting its CONSTANT_Utf8 entries.

    Class names, descriptors, signatures and string literals all live in Utf8 constants, and
    other constants refer to them by index, so only the Utf8 bytes and lengths change.
    Modified UTF-8 never encodes non-ASCII as ASCII bytes, so byte replacement is safe.
    """
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise InteropSetupError("Jackson relocation: not a class file (bad magic)")
    count = int.from_bytes(data[8:10], "big")
    out = bytearray(data[:10])
    pos, index = 10, 1
    while index < count:
        tag = data[pos]
        if tag == 1:
            length = int.from_bytes(data[pos + 1 : pos + 3], "big")
            text = _relocate_text(data[pos + 3 : pos + 3 + length])
            if len(text) > 0xFFFF:
                raise InteropSetupError("Jackson relocation: constant longer than 65535 bytes")
            out += b"\x01" + len(text).to_bytes(2, "big") + text
            pos += 3 + length
        elif tag in _CP_SIZES:
            out += data[pos : pos + 1 + _CP_SIZES[tag]]
            pos += 1 + _CP_SIZES[tag]
        else:
            raise InteropSetupError(f"Jackson relocation: unknown constant tag {tag} at {pos}")
        index += 2 if tag in (5, 6) else 1
    out += data[pos:]
    return bytes(out)


def _relocated_entry_name(name: str) -> str:
    """Move com/fasterxml/jackson/... (also under META-INF/versions/N/) to the shaded package."""
    head, sep, rest = name.partition(_JACKSON_FROM)
    if sep and (head == "" or (head.startswith("META-INF/versions/") and head.endswith("/"))):
        return head + _JACKSON_TO + rest
    if name.startswith("META-INF/services/"):
        return "META-INF/services/" + _relocate_text(name[18:].encode()).decode()
    return name


def build_relocated_jackson(jars: list[Path], target: Path) -> None:
    """Write a multi-release jar with Jackson's classes under org.apache.iceberg.shaded."""
    entries: dict[str, bytes] = {}
    for jar in jars:
        with zipfile.ZipFile(jar) as zf:
            for info in zf.infolist():
                name = info.filename
                if info.is_dir() or name.endswith("module-info.class"):
                    continue
                if name.endswith(".class") and _JACKSON_FROM in name:
                    entries[_relocated_entry_name(name)] = relocate_class(zf.read(name))
                elif name.startswith("META-INF/services/") and "jackson" in name:
                    entries[_relocated_entry_name(name)] = _relocate_text(zf.read(name))
    if not any(n.endswith("/databind/ObjectMapper.class") for n in entries):
        raise InteropSetupError(f"Jackson relocation: no ObjectMapper class in {jars}")
    manifest = (
        b"Manifest-Version: 1.0\r\nMulti-Release: true\r\nCreated-By: puffin-cli tests\r\n\r\n"
    )
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(fd)
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", (1980, 1, 1, 0, 0, 0)), manifest)
        for name in sorted(entries):
            out.writestr(
                zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), entries[name], zipfile.ZIP_DEFLATED
            )
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)


def relocated_jackson_jar(cache: Path, jackson: list[Path]) -> Path:
    key = hashlib.sha256(
        (_RELOCATION_VERSION + "".join(sorted(j.name for j in jackson))).encode()
    ).hexdigest()[:12]
    target = cache / "jars" / f"{key}-{RELOCATED_JACKSON_NAME}"
    if not target.is_file():
        build_relocated_jackson(jackson, target)
    return target


# --- the oracle -----------------------------------------------------------------------------


def _java_tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).is_file():
        return str(Path(java_home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise InteropSetupError(
            f"interop setup: {name!r} not found (install a JDK 17, e.g. apt-get install "
            "openjdk-17-jdk-headless, or set JAVA_HOME)"
        )
    return found


def compile_oracle(cache: Path, compile_jars: list[Path]) -> Path:
    sources = b"".join(source.read_bytes() for source in JAVA_SOURCES)
    key = hashlib.sha256(sources + "|".join(j.name for j in compile_jars).encode()).hexdigest()[:16]
    out_dir = cache / "oracle" / key
    if (out_dir / f"{ORACLE_MAIN_CLASS}.class").is_file():
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".build-"))
    run_checked(
        [
            _java_tool("javac"),
            "-nowarn",
            "-encoding",
            "UTF-8",
            "--release",
            "17",
            "-cp",
            os.pathsep.join(str(j) for j in compile_jars),
            "-d",
            str(staging),
            *(str(source) for source in JAVA_SOURCES),
        ],
        "javac " + " ".join(source.name for source in JAVA_SOURCES),
    )
    if out_dir.exists():
        shutil.rmtree(staging)
    else:
        os.replace(staging, out_dir)
    return out_dir


def java_env() -> JavaEnv:
    """Obtain every jar, relocate Jackson, compile the oracle; cached and idempotent."""
    need("java", "Iceberg Java (the interop cache's jars, a JVM)")
    cache = cache_dir()
    with cache_lock(cache):
        iceberg = iceberg_runtime_jar(cache)
        found = pyspark_jars(cache)
        jackson = relocated_jackson_jar(cache, [found[p] for p in JACKSON_JARS])
        slf4j = found[SLF4J_JAR]
        classes = compile_oracle(cache, [iceberg, jackson, slf4j])
    return JavaEnv(cache, iceberg, jackson, slf4j, classes, _java_tool("java"))
