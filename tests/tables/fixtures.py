"""The Spark-built test tables, generated once per generator version and cached.

``spark_tables`` (session fixture) returns the directory holding ``warehouse/db/<table>`` and
``<table>.oracle.json``. The cache key is the hash of generate.py, so editing the generator
regenerates; CI caches the interop cache directory between runs. Setup errors fail the tests
(never a skip).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from interop.javaenv import cache_lock
from interop.sparkenv import spark_env

GENERATOR = Path(__file__).resolve().parent / "generate.py"
TABLES = ("stats_v1", "stats_v2", "dv_v3")
_DONE = ".complete"


def generated_tables() -> Path:
    env = spark_env()
    key = hashlib.sha256(GENERATOR.read_bytes()).hexdigest()[:16]
    out = env.java.cache_dir / "tables" / key
    with cache_lock(env.java.cache_dir):
        if not (out / _DONE).is_file():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            env.run(GENERATOR, str(out), json.dumps(env.session_conf(out / "warehouse")))
            (out / _DONE).write_text(key + "\n")
    return out


@pytest.fixture(scope="session")
def spark_tables() -> Path:
    return generated_tables()
