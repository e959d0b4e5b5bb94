"""Big tables made by Iceberg Java (java/ScaleTables.java), and Iceberg Java's own planning of
them: ``table.newScan().planFiles()`` iterated to the end in a JVM of its own.

:func:`scale_table` builds a table once per version of ScaleTables.java and shape (cached in
the interop cache like the Spark tables, ``<cache>/scale-tables/<hash>/``);
:func:`plan_command` is the command that plans it (the baseline of benchmarks/bench_scale.py
and the truth of tests/test_interop_scale.py). The JVM runs Iceberg's runtime jar with
Hadoop's client jars from the PySpark 3.5 venv (Hadoop tables on the local file system).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from interop.javaenv import InteropSetupError, cache_lock, java_env, run_checked
from interop.sparkenv import spark_env

SOURCE = Path(__file__).resolve().parent / "java" / "ScaleTables.java"
# Hadoop's client (HadoopTables, the local file system) and what it logs through.
_HADOOP_JARS = ("hadoop-client-api-", "hadoop-client-runtime-", "commons-logging-")
APPENDS = 20


@dataclass(frozen=True)
class ScaleShape:
    """What :func:`scale_table` builds: ``files`` data files in :data:`APPENDS` appends, then
    ``dvs`` deletion vectors in ``puffins`` Puffin files in one row delta; ``metrics`` columns
    with column metrics in every data file entry (0: none)."""

    files: int
    dvs: int
    puffins: int
    metrics: int = 0

    @property
    def name(self) -> str:
        return f"f{self.files}-dv{self.dvs}-p{self.puffins}-m{self.metrics}"


def _classpath() -> tuple[str, str]:
    """(java, the classpath of the compiled ScaleTables) built once."""
    env = spark_env()
    jars = next(env.python.parent.parent.glob("lib/python3*/site-packages/pyspark/jars"))
    hadoop = [j for j in sorted(jars.glob("*.jar")) if j.name.startswith(_HADOOP_JARS)]
    if len(hadoop) != len(_HADOOP_JARS):
        raise InteropSetupError(f"scale tables: Hadoop client jars not found in {jars}")
    java = env.java
    libraries = [java.iceberg_runtime_jar, *java.library_jars, *hadoop]
    key = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    classes = java.cache_dir / "scale-classes" / key
    with cache_lock(java.cache_dir):
        if not (classes / "ScaleTables.class").is_file():
            classes.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=classes.parent, prefix=".build-"))
            javac = str(Path(java.java).with_name("javac"))
            run_checked([javac, "-nowarn", "-encoding", "UTF-8", "--release", "17", "-cp",
                         os.pathsep.join(map(str, libraries)), "-d", str(staging), str(SOURCE)],
                        "javac ScaleTables.java")
            os.replace(staging, classes)
    return java.java, os.pathsep.join(map(str, [classes, *libraries]))


def java_command(*args: str, heap: str = "2g") -> list[str]:
    java, classpath = _classpath()
    return [java, f"-Xmx{heap}", "-cp", classpath, "ScaleTables", *args]


def scale_table(shape: ScaleShape) -> Path:
    """The table directory of ``shape``, built by Iceberg Java once (then cached)."""
    command = java_command()  # compiles first, outside the lock below
    key = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    out = java_env().cache_dir / "scale-tables" / key / shape.name
    done = out.parent / f"{shape.name}.complete"
    out.parent.mkdir(parents=True, exist_ok=True)
    with cache_lock(out.parent):  # a build takes minutes: not the whole cache's lock
        if not done.is_file():
            shutil.rmtree(out, ignore_errors=True)
            run_checked([*command, "build", str(out), str(shape.files), str(APPENDS),
                         str(shape.dvs), str(shape.puffins), str(shape.metrics)],
                        f"ScaleTables build {shape.name}")
            done.write_text(key + "\n")
    return out


def plan_command(table: Path, out: Path | None = None) -> list[str]:
    """Iceberg Java planning ``table``'s current snapshot (JVM start included); with ``out``,
    the plan written there (ScaleTables.java: one sorted line per data file)."""
    return [*java_command(), "plan", str(table), *([] if out is None else [str(out)])]
