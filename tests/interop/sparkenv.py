"""A PySpark 3.5 + Iceberg 1.10.2 environment for building real table directories in tests.

PySpark 3.5 lives in its own venv under the interop cache (it is large and pins py4j), built
from the same pyspark sdist that javaenv takes the Jackson jars from. Tests run table-building
scripts with :attr:`SparkEnv.python`, configured by :meth:`SparkEnv.session_conf`.
See tests/interop/README.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tiers import need

from interop.javaenv import (
    InteropSetupError,
    JavaEnv,
    cache_lock,
    java_env,
    pyspark_sdist,
    run_checked,
)

_ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"


@dataclass(frozen=True)
class SparkEnv:
    python: Path
    jars: list[Path]
    java: JavaEnv

    def session_conf(self, warehouse: Path, catalog: str = "local") -> dict[str, str]:
        """Spark conf for an Iceberg Hadoop catalog named ``catalog`` on ``warehouse``.

        Only Iceberg's runtime jar and the relocated Jackson jar are added: Spark already
        ships slf4j-api (and unrelocated Jackson, which Iceberg's shaded code does not use)."""
        return {
            "spark.master": "local[2]",
            "spark.jars": ",".join(str(j) for j in self.jars),
            "spark.sql.extensions": _ICEBERG_EXTENSIONS,
            f"spark.sql.catalog.{catalog}": "org.apache.iceberg.spark.SparkCatalog",
            f"spark.sql.catalog.{catalog}.type": "hadoop",
            f"spark.sql.catalog.{catalog}.warehouse": str(warehouse),
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
        }

    def environ(self) -> dict[str, str]:
        """The environment a script in the Spark venv runs with (this venv's PySpark, not
        another installation's; Spark on the loopback address)."""
        env = dict(os.environ, PYSPARK_PYTHON=str(self.python), SPARK_LOCAL_IP="127.0.0.1")
        env.pop("SPARK_HOME", None)
        return env

    def run(self, script: Path, *args: str, timeout: float = 900) -> str:
        """Run a Python script in the Spark venv; return stdout, raise with stderr's tail."""
        proc = subprocess.run(
            [str(self.python), str(script), *args],
            capture_output=True,
            text=True,
            env=self.environ(),
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise InteropSetupError(
                f"spark script {script.name} failed (exit {proc.returncode}):\n"
                + "\n".join(proc.stderr.strip().splitlines()[-30:])
            )
        return proc.stdout


def spark_env() -> SparkEnv:
    """Create (once) the PySpark 3.5 venv and return how to run Spark with Iceberg."""
    need("spark", "PySpark 3.5 with Iceberg (the interop cache's Spark venv)")
    jenv = java_env()
    venv = jenv.cache_dir / "spark-venv"
    python = venv / "bin" / "python"
    marker = venv / ".ready"
    with cache_lock(jenv.cache_dir):
        if not marker.is_file():
            sdist = pyspark_sdist(jenv.cache_dir)
            run_checked([sys.executable, "-m", "venv", "--clear", str(venv)], "create spark venv")
            run_checked(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "-q",
                    str(sdist),
                ],
                f"pip install {sdist.name} into {venv}",
            )
            marker.write_text(sdist.name + "\n")
    return SparkEnv(python, [jenv.iceberg_runtime_jar, jenv.relocated_jackson_jar], jenv)


def script_output(script: Path, folder: str, *args: str, depends: tuple[Path, ...] = ()
                  ) -> Path:
    """Run a table-building PySpark 3.5 script once per version of it, as
    ``script *args OUT CONF``: OUT is ``<cache>/<folder>/<hash of the script>`` (reused while the
    script is unchanged, so editing it rebuilds; ``depends`` are the other scripts whose code
    shapes what it records, hashed after it), CONF the session configuration (JSON) for a
    warehouse under OUT. Returns OUT."""
    env = spark_env()
    digest = hashlib.sha256(script.read_bytes())
    for other in depends:
        digest.update(other.read_bytes())
    key = digest.hexdigest()[:16]
    out = env.java.cache_dir / folder / key
    done = out / ".complete"
    with cache_lock(env.java.cache_dir):
        if not done.is_file():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            env.run(script, *args, str(out), json.dumps(env.session_conf(out / "warehouse")))
            done.write_text(key + "\n")
    return out
