"""Test tables for ``puffin table``: real ones built by Spark + Iceberg Java (generate.py, cached),
synthetic ones written with fastavro (synthetic.py), and corrupt copies of either (corrupt.py)."""
