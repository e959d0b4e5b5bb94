"""The ``puffin`` command group.

Subcommands are imported only when they run (``puffin inspect`` never imports the Spark
pipeline). Errors become one line on stderr here, in one place; ``--debug`` (or
``PUFFIN_DEBUG=1``) shows the traceback instead.

Exit codes: 0 ok; 1 a file is bad or a check failed; 2 usage error; 3 internal error (a bug).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import NoReturn

import click

from puffin_cli import __version__
from puffin_cli.cli.grammar import Group, Settings
from puffin_cli.format.errors import PuffinError

EXIT_OK = 0
EXIT_BAD_FILE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

# name -> "module:attribute"; each module defines one click command.
COMMANDS = {
    "inspect": "puffin_cli.cli.inspect:inspect",
    "dump-blob": "puffin_cli.cli.dump_blob:dump_blob",
    "validate": "puffin_cli.cli.validate:validate",
    "table": "puffin_cli.cli.table:table",
    "write": "puffin_cli.cli.write:write",
    "stats": "puffin_cli.cli.stats:stats",
    "scan": "puffin_cli.cli.scan:scan",
}


# Each command's one-line summary, so that `puffin --help` imports no command module
# (tests/test_cli_grammar.py checks them against the commands).
SUMMARIES = {
    "inspect": "Show a Puffin file's footer, blobs and decoded blob contents.",
    "dump-blob": "One blob's bytes, hex, DV positions, sketch description or JSON.",
    "validate": "Check Puffin files against the spec and report every finding.",
    "table": "Show and cross-check the Puffin files of Iceberg tables.",
    "write": "Write a Puffin file: Theta sketches, deletion vectors, raw blobs.",
    "stats": "Table statistics computed with Apache Spark.",
    "scan": "Validate every Puffin file of a warehouse, in parallel on Spark.",
}


class LazyGroup(Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``puffin --help``, from :data:`SUMMARIES`."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARIES[name]) for name in self.list_commands(ctx)])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="puffin")
@click.option("--debug", is_flag=True, envvar="PUFFIN_DEBUG",
              help="Show Python tracebacks instead of one-line errors (also after the "
                   "command name, or PUFFIN_DEBUG=1).")
@click.option("--color/--no-color", default=None,
              help="Colour the human output or not (also after the command name) [default: "
                   "colour on a terminal; NO_COLOR and FORCE_COLOR are honoured].")
@click.pass_context
def cli(ctx: click.Context, debug: bool, color: bool | None) -> None:
    """Inspect, validate and write Apache Iceberg Puffin files.

    \b
    Exit codes:
      0  everything is fine
      1  a file is bad or a check failed
      2  usage error (bad option or argument)
      3  internal error (a bug in puffin-cli; please report it)
    """
    chosen = ctx.obj if isinstance(ctx.obj, Settings) else Settings()
    chosen.debug = chosen.debug or debug
    chosen.color = chosen.color if color is None else color
    ctx.obj = chosen


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("PUFFIN_DEBUG", "") not in ("", "0")


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI, turning library errors into one line on stderr and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    try:
        result = cli.main(args=args, prog_name="puffin", standalone_mode=False)
        sys.exit(result if isinstance(result, int) else EXIT_OK)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("puffin: aborted", err=True)
        sys.exit(EXIT_BAD_FILE)
    except PuffinError as exc:
        if _debug_requested(args):
            raise
        click.echo(f"puffin: error: {exc}", err=True)
        sys.exit(EXIT_BAD_FILE)
    except BrokenPipeError:
        # Output piped into a reader that stopped early (e.g. `| head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    except KeyboardInterrupt:
        click.echo("puffin: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        if _debug_requested(args):
            raise
        click.echo(f"puffin: internal error: {type(exc).__name__}: {exc} "
                   "(run with --debug for the traceback)", err=True)
        sys.exit(EXIT_INTERNAL)
