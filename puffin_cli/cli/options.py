"""Options shared by several commands, defined once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE

F = TypeVar("F", bound=Callable[..., Any])

_SIZE_UNITS = {"": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
               "g": 1 << 30, "gib": 1 << 30}


class ByteSize(click.ParamType[int, Any]):
    """A byte count such as ``512MiB``, ``64k`` or ``1048576``."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower()
        number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = text[len(number):]
        count = decimal_int(number)
        if count is None or unit not in _SIZE_UNITS:
            self.fail(f"{shown_value(value)} is not a size like 512MiB, 64k or 1048576",
                      param, ctx)
        return count * _SIZE_UNITS[unit]


def shown_value(value: Any) -> str:
    """A bad value as a usage error quotes it: cut to 40 characters, so a huge argument does
    not flood the terminal."""
    text = str(value)
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}…"


class DecimalInt(click.ParamType[int, Any]):
    """An integer in ASCII decimal digits (``-`` allowed when ``signed``), at least ``min``.
    Python's ``int`` also takes other scripts' digits (Arabic-Indic ``١٢``), spaces and
    underscores; an option value is what the user typed, so those are usage errors."""

    name = "integer"

    def __init__(self, *, min: int | None = None, signed: bool = False) -> None:
        self.min = min
        self.signed = signed

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        number = decimal_int(str(value), signed=self.signed)
        if number is None:
            self.fail(f"{shown_value(value)} is not an integer in decimal digits", param, ctx)
        if self.min is not None and number < self.min:
            self.fail(f"{number} is less than the smallest allowed, {self.min}", param, ctx)
        return number


# The snapshot-id of blobs that claim no snapshot (the Puffin spec's -1), spelled ``none``.
NO_SNAPSHOT = -1


class SnapshotId(DecimalInt):
    """A snapshot ID, or ``none`` (any case) for :data:`NO_SNAPSHOT`."""

    name = "ID|none"

    def __init__(self) -> None:
        super().__init__(signed=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, str) and value.strip().lower() == "none":
            return NO_SNAPSHOT
        return super().convert(value, param, ctx)


def json_option(func: F) -> F:
    """``--json``: the one output selection, the command's JSON document instead of the human
    view."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Write the result as a JSON document instead of the human view "
                             "(an object with schema-version; docs/json.md).")(func)


def quiet_option(func: F) -> F:
    """``-q/--quiet``: no human output (result view, progress); errors still on stderr,
    ``--json`` still writes its document, the exit code says how it went."""
    return click.option("-q", "--quiet", is_flag=True,
                        help="No human output: no result view, no progress (errors still go "
                             "to stderr, --json still writes its document); the exit code says "
                             "how it went.")(func)


def strict_option(func: F) -> F:
    """``--strict``: warnings fail too (exit 1), not only errors."""
    return click.option("--strict", is_flag=True,
                        help="Fail on warnings too, not only on errors.")(func)


def github_option(func: F) -> F:
    """``--github``: GitHub Actions annotations instead of the human view."""
    return click.option("--github", is_flag=True,
                        help="GitHub Actions annotations (::error file=...::message) instead of "
                             "the human view.")(func)


def output_file_option(what: str) -> Callable[[F], F]:
    """``-o/--output FILE``: where a command writes its output file instead of stdout."""
    return click.option("-o", "--output", "output", default=None, metavar="FILE",
                        help=f"Write {what} to FILE (a path or an object).")


def force_option(func: F) -> F:
    """``--force``: an existing output file may be replaced (a FIFO or device never is)."""
    return click.option("--force", is_flag=True,
                        help="Replace the output file if it exists.")(func)


def snapshot_option(help_text: str) -> Callable[[F], F]:
    """``--snapshot ID``: a snapshot of a table (old spelling ``--snapshot-id``)."""
    return click.option("--snapshot", "snapshot_id", type=DecimalInt(signed=True), default=None,
                        metavar="ID", help=help_text)


# How uuid values are hashed into Theta sketches. Iceberg Java's writer of NDV statistics (the
# Spark procedure compute_table_stats) reads a uuid column as a Spark string and hashes its
# text; the spec's single-value serialization is the 16 bytes.
UUID_HASH_CHOICES = ("text", "bytes")
DEFAULT_UUID_HASH = "text"


def uuid_hash_option(func: F) -> F:
    return click.option("--uuid-hash", type=click.Choice(UUID_HASH_CHOICES),
                        default=DEFAULT_UUID_HASH, show_default=True,
                        help="How uuid values are hashed into sketches: text (the 36-character "
                             "form, what Iceberg Java's compute_table_stats writes: Spark reads "
                             "a uuid as a string) or bytes (the spec's 16-byte "
                             "serialization).")(func)


def max_blob_size_option(func: F) -> F:
    return click.option("--max-blob-size", type=ByteSize(), default=DEFAULT_MAX_BLOB_SIZE,
                        show_default="64MiB",
                        help="Refuse to decode a blob or Puffin footer larger than this "
                             "(stored or decompressed); it also bounds the JSON values a "
                             "footer may hold (one per 64 bytes).")(func)


def path_option(func: F) -> F:
    """``--path FILE``, the Java puffin-tools spelling; the file may also be positional."""
    return click.option("--path", "path_options", multiple=True, metavar="FILE",
                        help="A file to read (same as giving it as an argument).")(func)


def _relocations(ctx: click.Context, param: click.Parameter,
                 value: tuple[str, ...]) -> list[tuple[str, str]]:
    rules = []
    for spec in value:
        source, sep, target = spec.partition("=")
        if not sep or not source or not target:
            raise click.BadParameter(f"{spec!r}: expected FROM=TO (e.g. "
                                     "s3://bucket/warehouse=/data/warehouse)", ctx, param)
        rules.append((source, target))
    return rules


def relocate_option(func: F) -> F:
    """``--relocate FROM=TO`` (repeatable), parsed into (FROM, TO) pairs."""
    return click.option("--relocate", multiple=True, metavar="FROM=TO", callback=_relocations,
                        help="Read locations starting with FROM under the local directory TO "
                             "(repeatable). The table's own location is mapped automatically "
                             "when the table was moved.")(func)


def _spark_conf(ctx: click.Context, param: click.Parameter,
                value: tuple[str, ...]) -> dict[str, str]:
    conf = {}
    for spec in value:
        key, sep, setting = spec.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{spec!r}: expected KEY=VALUE (e.g. "
                                     "spark.sql.shuffle.partitions=64)", ctx, param)
        conf[key.strip()] = setting
    return conf


def spark_conf_option(func: F) -> F:
    """``--conf KEY=VALUE`` (repeatable): Spark settings, parsed into a dict."""
    return click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                        callback=_spark_conf,
                        help="A Spark setting (repeatable), as spark-submit's --conf. A "
                             "running session (spark-submit) takes its spark.sql.* ones.")(func)


def _io_properties(ctx: click.Context, param: click.Parameter,
                   value: tuple[str, ...]) -> dict[str, str]:
    from puffin_cli.storage import configure
    from puffin_cli.storage.config import unknown_properties

    properties = {}
    for spec in value:
        key, sep, setting = spec.partition("=")
        key = key.strip()
        if not sep or not key:
            raise click.BadParameter(f"{spec!r}: expected KEY=VALUE (e.g. "
                                     "s3.endpoint=http://127.0.0.1:9000)", ctx, param)
        properties[key] = setting
    unknown = unknown_properties(properties)
    if unknown:
        raise click.BadParameter(f"{unknown[0]!r} is not a FileIO property (s3.*, gcs.*, "
                                 "adls.*, client.*; see docs/cli.md)", ctx, param)
    configure(properties)
    return properties


def io_option(func: F) -> F:
    """``--io KEY=VALUE`` (repeatable): storage properties with pyiceberg's FileIO names,
    applied to every location the command reads or writes."""
    return click.option("--io", "io_properties", multiple=True, metavar="KEY=VALUE",
                        callback=_io_properties, expose_value=False,
                        help="Object-store setting, pyiceberg FileIO name (repeatable): "
                             "s3.endpoint=URL, s3.region=..., adls.*, gcs.* (docs/cli.md).")(func)


def catalog_option(func: F) -> F:
    """``--catalog NAME``: the command's table is an identifier ``namespace.table`` there."""
    return click.option("--catalog", default=None, metavar="NAME",
                        help="Name the table as NAMESPACE.TABLE in this Iceberg catalog, "
                             "configured as pyiceberg configures it (.pyiceberg.yaml, "
                             "PYICEBERG_CATALOG__NAME__*); needs the catalog extra.")(func)
