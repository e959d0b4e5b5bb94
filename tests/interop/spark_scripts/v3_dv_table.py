"""Run with the Spark venv's python, argument CONF_JSON (SparkEnv.session_conf, catalog
`local`). Builds a format-version 3 merge-on-read table, deletes rows (Iceberg writes deletion
vectors), computes table stats (theta sketches), prints a JSON summary."""

import json
import sys

from pyspark.sql import SparkSession


def main() -> None:
    conf = json.loads(sys.argv[1])
    builder = SparkSession.builder.appName("puffin-cli-interop")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql(
        "CREATE TABLE local.db.t (id BIGINT, name STRING) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql("INSERT INTO local.db.t SELECT id, concat('n', id) FROM range(0, 1000)")
    spark.sql("DELETE FROM local.db.t WHERE id % 10 = 3")
    remaining = spark.sql("SELECT count(*) FROM local.db.t").collect()[0][0]
    deletes = [
        row.asDict()
        for row in spark.sql(
            "SELECT file_path, file_format, referenced_data_file, content_offset, "
            "content_size_in_bytes, record_count FROM local.db.t.delete_files"
        ).collect()
    ]
    stats = spark.sql("CALL local.system.compute_table_stats(table => 'db.t')").collect()
    spark.stop()
    print(
        json.dumps(
            {
                "remaining": remaining,
                "delete_files": deletes,
                "statistics_file": stats[0][0] if stats else None,
            }
        )
    )


if __name__ == "__main__":
    main()
