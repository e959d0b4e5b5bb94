"""``puffin validate``: every finding about each file, and an exit code for CI."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

import click

from puffin_cli.analysis.profiles import PROFILES
from puffin_cli.cli.exit_codes import EXIT_BAD_FILE, EXIT_OK
from puffin_cli.cli.grammar import Command, emit, renamed_choice
from puffin_cli.cli.options import (
    force_option,
    github_option,
    io_option,
    json_option,
    max_blob_size_option,
    path_option,
    quiet_option,
    strict_option,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.paimon_blob import MAGIC_BYTES as PAIMON_RECORD_MAGIC
from puffin_cli.format.paimon_blob import SUFFIX as PAIMON_SUFFIX
from puffin_cli.format.spec import MAGIC, PUFFIN_SUFFIXES
from puffin_cli.storage import FileInfo, FileIO, default_io, has_magic


def _looks_like_puffin(fileio: FileIO, info: FileInfo) -> bool:
    """A Puffin file or a Paimon BLOB file, by name or by its first bytes."""
    if info.location.endswith((*PUFFIN_SUFFIXES, PAIMON_SUFFIX)):
        return True
    if info.size < len(MAGIC):
        return False
    try:
        with fileio.new_input(info.location, length=info.size) as source:
            return source.read(0, len(MAGIC)) in (MAGIC, PAIMON_RECORD_MAGIC)
    except PuffinError:
        return False


def _puffin_files(fileio: FileIO, listing: Iterable[FileInfo]) -> Iterator[str]:
    for info in listing:
        if _looks_like_puffin(fileio, info):
            yield info.location


def expand(args: list[str], fileio: FileIO | None = None) -> list[str]:
    """Files as given, directories (and object-store prefixes) searched recursively for Puffin
    files, glob patterns expanded; duplicates dropped, first-seen order kept."""
    fileio = fileio or default_io()
    found: dict[str, None] = {}
    for arg in args:
        info, listing = fileio.find(arg)
        if info is not None and info.kind == "dir":
            found.update(dict.fromkeys(_puffin_files(fileio, listing)))
        elif info is not None:
            found[arg] = None
        elif has_magic(arg):
            matches = fileio.glob(arg)
            if not matches:
                raise click.UsageError(f"{arg}: the pattern matches no files")
            for match in matches:
                matched, listing = fileio.find(match)
                if matched is not None and matched.kind == "dir":
                    found.update(dict.fromkeys(_puffin_files(fileio, listing)))
                else:
                    found[match] = None
        else:
            raise click.UsageError(f"{arg}: no such file or directory")
    return list(found)


# The old --format human|json|github (before --json and --github).
_OLD_FORMAT = renamed_choice("--json", {"human": [], "json": ["--json"], "github": ["--github"]},
                             "--json or --github")


@click.command("validate", cls=Command, renamed={"--format": _OLD_FORMAT})
@click.argument("paths", nargs=-1, metavar="PATH...")
@path_option
@click.option("--profile", type=click.Choice(PROFILES), default="spec", show_default=True,
              help="Also check what this engine rejects (docs/validate.md lists the rules).")
@strict_option
@click.option("-v", "--verbose", is_flag=True,
              help="Show every file, also those without errors or warnings.")
@json_option
@github_option
@click.option("--junit-xml", "junit_xml", metavar="FILE", default=None,
              help="Also write a JUnit XML report to FILE (a path or an object): a test case "
                   "per file, a failure per finding that fails it.")
@force_option
@quiet_option
@max_blob_size_option
@io_option
@click.pass_context
def validate(ctx: click.Context, paths: tuple[str, ...], path_options: tuple[str, ...],
             profile: str, strict: bool, verbose: bool, as_json: bool, github: bool,
             junit_xml: str | None, force: bool, quiet: bool, max_blob_size: int) -> None:
    """Check Puffin files against the spec and report every finding.

    PATH may be a file, a directory (searched recursively for *.puffin, *.stats and any file
    starting with PFA1, and for Paimon BLOB files: *.blob and any file starting with a BLOB
    record's magic) or a glob pattern. Paimon BLOB files are checked against Paimon's format.
    Shows the files with errors or warnings (every file with --verbose), then a summary naming
    the files that failed.

    \b
    Examples:
      puffin validate metadata/*.stats
      puffin validate --strict --github warehouse/
      puffin validate --profile pyiceberg --json data.puffin
      puffin validate --junit-xml report.xml fixtures/

    \b
    Exit codes: 0 no file has an error (with --strict: nor a warning),
                1 some file does, 2 usage error.
    """
    from puffin_cli.analysis.validate import ValidationRun, validate_files
    from puffin_cli.render.progress import ProgressDisplay
    from puffin_cli.storage import default_io

    if as_json and github:
        raise click.UsageError("--json and --github exclude each other")
    names = [*paths, *path_options]
    if not names:
        raise click.UsageError("give at least one PATH (a file, directory or glob pattern)")
    with ProgressDisplay(not quiet) as display:
        display.phase("finding Puffin files")
        fileio = default_io()
        files = expand(names, fileio)
        if not files:
            raise click.UsageError(f"no Puffin files found in {', '.join(names)}")
        display.phase("validating")
        reports = validate_files(files, profile=profile, max_blob_size=max_blob_size,
                                 fileio=fileio, progress=display.advance)
    run = ValidationRun.of(reports, profile=profile, strict=strict)
    if junit_xml is not None:
        from puffin_cli.render.junit import junit_xml as report

        with fileio.new_output(junit_xml).create(overwrite=force) as out:
            out.write(report(run))
    if as_json:
        emit(ctx, run)
    elif not quiet:
        from puffin_cli.render import validate as views

        emit(ctx, run, views.github if github else views.every_file if verbose else
             views.problems)
    # sys.exit, not click's Exit: main() runs click with standalone_mode=False, which turns
    # Exit into a return value that `python -m puffin_cli` would drop.
    sys.exit(EXIT_BAD_FILE if run.failed else EXIT_OK)
