"""What the table-building scripts in this directory share (PySpark 3.5 venv, Iceberg's Java
API through py4j): the session, loading a table of the ``local`` catalog, writing an
equality delete file."""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession


def session(app: str, conf: dict[str, str]) -> SparkSession:
    """A session named ``app`` configured by ``conf`` (tests/interop/sparkenv.py's conf)."""
    builder = SparkSession.builder.appName(app)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def load_table(spark: SparkSession, name: str) -> Any:
    """Iceberg's ``Table`` for ``local.db.<name>``."""
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"local.db.{name}")  # type: ignore[attr-defined]


def write_equality_delete(spark: SparkSession, name: str, columns: list[str],
                          values: list[tuple[Any, ...]], file_name: str, *,
                          spec_id: int | None = None, partition: Any = None) -> Any:
    """An equality delete file of table ``name`` on ``columns`` (one row per ``values`` tuple,
    None = NULL), written as ``data/<file_name>.parquet`` in spec ``spec_id`` (default: the
    current one) and the partition whose first field is ``partition`` (None: the spec is
    unpartitioned, a global delete); not committed."""
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    gateway: Any = spark.sparkContext._gateway  # type: ignore[attr-defined]
    table = load_table(spark, name)
    schema = table.schema()
    spec = table.spec() if spec_id is None else table.specs().get(spec_id)
    ids = gateway.new_array(jvm.int, len(columns))
    for i, column in enumerate(columns):
        ids[i] = schema.findField(column).fieldId()
    delete_schema = schema.select(columns)
    factory = jvm.org.apache.iceberg.data.GenericAppenderFactory(schema, spec, ids,
                                                                 delete_schema, None)
    key = None
    if partition is not None:
        key = jvm.org.apache.iceberg.data.GenericRecord.create(spec.partitionType())
        key.set(0, partition)
    output = jvm.org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(
        table.io().newOutputFile(f"{table.location()}/data/{file_name}.parquet"))
    writer = factory.newEqDeleteWriter(output, jvm.org.apache.iceberg.FileFormat.PARQUET, key)
    for value in values:
        record = jvm.org.apache.iceberg.data.GenericRecord.create(delete_schema)
        for column, item in zip(columns, value, strict=True):
            record.setField(column, item)
        writer.write(record)
    writer.close()
    return writer.toDeleteFile()


def create_table(spark: SparkSession, name: str, fields: list[tuple[int, str, Any, bool]],
                 properties: dict[str, str]) -> None:
    """Create the unpartitioned table ``local.db.<name>`` through Iceberg's Java API (for types
    Spark SQL cannot declare): ``fields`` are (field ID, name, Iceberg type, required)."""
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    catalog = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergCatalog(
        spark._jsparkSession, "local")  # type: ignore[attr-defined]
    nested = jvm.org.apache.iceberg.types.Types.NestedField
    columns = jvm.java.util.ArrayList()
    for field_id, column, kind, required in fields:
        columns.add((nested.required if required else nested.optional)(field_id, column, kind))
    settings = jvm.java.util.HashMap()
    for key, value in properties.items():
        settings.put(key, value)
    catalog.createTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"),
                        jvm.org.apache.iceberg.Schema(columns),
                        jvm.org.apache.iceberg.PartitionSpec.unpartitioned(), settings)
