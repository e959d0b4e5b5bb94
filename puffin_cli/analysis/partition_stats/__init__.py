"""Partition statistics files (table spec, "Partition Statistics"): one row per partition tuple
of a snapshot, in Parquet.

- ``model.py``   the spec's fields, the unified partition type, a row (:class:`StatsRow`)
- ``compute.py`` the rows of a snapshot from its manifests alone, full or incremental from an
                 ancestor's file, as Iceberg Java 1.10's ``PartitionStatsHandler`` computes them
- ``parquet.py`` reading (schema by field ID, the Iceberg 1.9.x layout named) and writing
- ``checks.py``  ``puffin table``'s checks of a registered file against its snapshot
"""
