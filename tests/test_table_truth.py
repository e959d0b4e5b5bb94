"""What ``puffin table`` says about real tables (pyiceberg in a SQL catalog) is true (issue 27
§5): an ancestor's statistics file an engine uses is checked, a broken table of a warehouse is
a finding of that table while the others are shown, a Puffin file is not a table."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from test_catalog import local_path, sql_catalog  # noqa: F401  (fixture)

from puffin_cli.cli.main import cli
from puffin_cli.format.spec import NDV_PROPERTY, THETA_BLOB_TYPE
from puffin_cli.format.writer import PuffinWriter


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def register_statistics(table: Any, snapshot_id: int, values: list[int]) -> str:
    """A statistics file of one theta blob (field 1) for ``snapshot_id``, committed by
    pyiceberg; its location."""
    from pyiceberg.table.statistics import BlobMetadata, StatisticsFile

    from puffin_cli.blobs.theta import build_theta_blob
    from puffin_cli.format.reader import PuffinReader

    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    location = f"{table.location()}/metadata/{snapshot_id}-stats.puffin"
    path = local_path(location)
    data, ndv = build_theta_blob("long", values)
    with PuffinWriter(path, properties={"created-by": "puffin-cli tests"}) as writer:
        writer.add_blob(THETA_BLOB_TYPE, data, fields=[1], snapshot_id=snapshot_id,
                        sequence_number=snapshot.sequence_number,
                        properties={NDV_PROPERTY: str(ndv)})
    with PuffinReader(path) as reader:
        footer_size = reader.footer.footer_size
    with table.update_statistics() as update:
        update.set_statistics(StatisticsFile(
            snapshot_id=snapshot_id, statistics_path=location,
            file_size_in_bytes=path.stat().st_size, file_footer_size_in_bytes=footer_size,
            blob_metadata=[BlobMetadata(type=THETA_BLOB_TYPE, snapshot_id=snapshot_id,
                                        sequence_number=snapshot.sequence_number, fields=[1],
                                        properties={NDV_PROPERTY: str(ndv)})]))
    return location


def table_json(*args: str) -> tuple[int, dict[str, Any]]:
    outcome = invoke("table", "--json", *args)
    return outcome.exit_code, json.loads(outcome.stdout)


def test_an_ancestors_statistics_file_trino_uses_is_checked(
        sql_catalog: Any) -> None:  # noqa: F811
    table = sql_catalog.load_table("db.events")
    first, current = table.snapshots()
    assert current.parent_snapshot_id == first.snapshot_id
    location = register_statistics(table, first.snapshot_id, list(range(600)))
    code, doc = table_json("--catalog", "test", "db.events")
    (view,) = doc["tables"][0]["snapshots"]
    assert view["snapshot-id"] == current.snapshot_id
    assert view["statistics-used"] == {"spark": None, "trino": location,
                                       "trino-snapshot-id": first.snapshot_id}
    assert (code, doc["tables"][0]["findings"]) == (0, [])
    local_path(location).unlink()
    code, doc = table_json("--catalog", "test", "db.events")
    (found,) = doc["tables"][0]["findings"]
    assert (found["code"], found["path"], found["snapshot-id"]) == \
        ("table.stats.missing", location, first.snapshot_id)
    assert code == 1
