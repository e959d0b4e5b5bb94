"""puffin-cli: inspect, validate and write Apache Iceberg Puffin files."""

# The one place the version is set (pyproject.toml reads it from here): a literal, because
# asking importlib.metadata costs more start-up time than a whole `puffin inspect --json`.
__version__ = "0.1.0"

CREATED_BY = f"puffin-cli {__version__}"
