"""``stats compute`` of one table as the command runs it, for tests: the pipeline
(:func:`puffin_cli.analysis.stats.pipeline.compute_loaded`) with both sketchers available,
``sketcher`` choosing one (``in-process``, ``spark``) or leaving it to the size (``auto``).

Import as ``from stats_compute import compute_stats, SKETCHERS``.
"""

from __future__ import annotations

import os
from typing import Any

from puffin_cli.analysis.stats.options import SketcherChoice, StatsOptions, UuidHash
from puffin_cli.analysis.stats.result import StatsResult
from puffin_cli.storage import FileIO

# The two sketchers, for tests that run the same case through both (pytest parameters).
SKETCHERS = (SketcherChoice.IN_PROCESS, SketcherChoice.SPARK)


def compute_stats(table: str | os.PathLike[str], *, sketcher: SketcherChoice | str = "auto",
                  master: str | None = "local[2]", fileio: FileIO | None = None,
                  relocate: list[tuple[str, str]] | None = None, output: str | None = None,
                  columns: list[str] | None = None, uuid_hash: str = "text",
                  **options: Any) -> StatsResult:
    """The result of ``stats compute`` of ``table`` (a directory or metadata file); ``options``
    are :class:`StatsOptions` fields; ``output`` a file to write instead of the table's
    metadata folder."""
    from puffin_cli.analysis.stats.pipeline import Sketchers, compute_loaded
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.spark.stats import SparkSketcher

    chosen = StatsOptions(columns=None if columns is None else tuple(columns),
                          uuid_hash=UuidHash(uuid_hash), sketcher=SketcherChoice(sketcher),
                          **options)
    loaded = Table.load(table, fileio=fileio or FileIO(), relocate=relocate)
    return compute_loaded(loaded, str(table), chosen, Sketchers.around(SparkSketcher(master)),
                          output=None if output is None else lambda _label, _id: output)
