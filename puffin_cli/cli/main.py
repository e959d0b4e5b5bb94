"""``puffin``'s entry point: runs the command group (cli/group.py), or the quick path of the
commonest invocation (cli/quick.py), and turns errors into one line on stderr, in one place;
``--debug`` (or ``PUFFIN_DEBUG=1``) shows the traceback instead. Nothing here imports click,
so that the quick path never does.

Exit codes: 0 ok; 1 a file is bad or a check failed; 2 usage error; 3 internal error (a bug).
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

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


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("PUFFIN_DEBUG", "") not in ("", "0")


def __getattr__(name: str) -> Any:
    """``cli``, the click group, imported (with click) on first use."""
    if name == "cli":
        from puffin_cli.cli.group import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _run_group(args: list[str]) -> int:
    """The click group on ``args``; its exit status."""
    import click

    from puffin_cli.cli.group import cli

    try:
        result = cli.main(args=args, prog_name="puffin", standalone_mode=False)
        return result if isinstance(result, int) else EXIT_OK
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        _say("puffin: aborted")
        return EXIT_BAD_FILE


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI, turning library errors into one line on stderr and an exit code."""
    from puffin_cli.cli.quick import quick_inspect

    args = sys.argv[1:] if argv is None else argv
    try:
        code = quick_inspect(args)
        sys.exit(_run_group(args) if code is None else code)
    except PuffinError as exc:
        if _debug_requested(args):
            raise
        _say(f"puffin: error: {exc}")
        sys.exit(EXIT_BAD_FILE)
    except BrokenPipeError:
        # Output piped into a reader that stopped early (e.g. `| head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    except KeyboardInterrupt:
        _say("puffin: interrupted")
        sys.exit(130)
    except Exception as exc:
        if _debug_requested(args):
            raise
        _say(f"puffin: internal error: {type(exc).__name__}: {exc} "
             "(run with --debug for the traceback)")
        sys.exit(EXIT_INTERNAL)
