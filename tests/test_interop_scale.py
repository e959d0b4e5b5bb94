"""A table of 100,000 data files and 10,000 deletion vectors (in 10 Puffin files) made by
Iceberg Java (tests/interop/scale.py, cached): ``puffin table``, ``puffin stats compute
--dry-run`` and ``puffin repair`` report exactly what Iceberg Java's ``planFiles`` plans for
its current snapshot: every data file, the delete files of each (path, blob range) and each
deletion vector's cardinality (the delete file's record count in Java's plan, the bitmap's
cardinality as puffin-cli decodes it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from interop.scale import ScaleShape, plan_command, scale_table

from puffin_cli.cli.main import cli

pytestmark = pytest.mark.spark  # the Iceberg Java classes and Hadoop jars of the Spark venv

SHAPE = ScaleShape(files=100_000, dvs=10_000, puffins=10)


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """The table and Java's plan of it: data file -> its delete files as
    ``path@offset+size:records``."""
    table = scale_table(SHAPE)
    out = tmp_path_factory.mktemp("java-plan") / "plan.tsv"
    subprocess.run(plan_command(table, out), check=True, capture_output=True, timeout=600)
    plan = {}
    for line in out.read_text().splitlines():
        data, *deletes = line.split("\t")
        plan[data] = deletes
    return table, plan


def _json(*args: str) -> dict:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_table_reports_what_java_plans(planned: tuple[Path, dict[str, list[str]]]) -> None:
    table, plan = planned
    report = _json("table", "--json", str(table))["tables"][0]
    assert report["errors"] == 0 and report["warnings"] == 0, report["findings"][:3]
    (snapshot,) = report["snapshots"]
    totals = snapshot["totals"]
    assert totals["data-files"] == len(plan) == SHAPE.files
    assert totals["deletion-vectors"] == sum(len(d) for d in plan.values()) == SHAPE.dvs
    assert totals["dv-files"] == SHAPE.puffins
    assert snapshot["deletion-vectors-omitted"] == 0
    ours = {dv["data-file"]: [f"{dv['path']}@{dv['offset']}+{dv['length']}:{dv['cardinality']}"]
            for dv in snapshot["deletion-vectors"]}
    assert all(dv["cardinality"] == dv["record-count"] for dv in snapshot["deletion-vectors"])
    assert ours == {data: deletes for data, deletes in plan.items() if deletes}
    deleted = sum(int(d.rsplit(":", 1)[1]) for deletes in plan.values() for d in deletes)
    assert totals["deleted-rows"] == deleted


def test_dry_run_plans_what_java_plans(planned: tuple[Path, dict[str, list[str]]]) -> None:
    table, plan = planned
    (done,) = _json("stats", "compute", "--dry-run", "--json", str(table))["tables"]
    assert done["status"] == "planned"
    assert done["plan"]["data-files"] == done["plan"]["files-to-read"] == len(plan)


def test_repair_finds_nothing_to_repair(planned: tuple[Path, dict[str, list[str]]]) -> None:
    table, _plan = planned
    report = _json("repair", "--json", str(table))
    assert report["planned"] == report["unrepairable"] == report["applied"] == []
