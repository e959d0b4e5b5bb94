"""puffin-cli: inspect, validate and write Apache Iceberg Puffin files."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("puffin-cli")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

CREATED_BY = f"puffin-cli {__version__}"
