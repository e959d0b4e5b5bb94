"""``puffin``'s entry point: runs the command group (cli/group.py), or the quick path of the
commonest invocation (cli/quick.py), and keeps the process contract every command owes, in one
place. Nothing here imports click, so that the quick path never does.

Errors become one line on stderr; ``--debug`` (or ``PUFFIN_DEBUG=1``) shows the traceback
instead. An error's kind, not the command that raised it, decides the exit code
(cli/exit_codes.py): 0 ok; 1 a file is bad, a limit was hit, I/O failed or a check failed; 2 usage
error; 3 internal error (a bug); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM). A reader
that stops early (``| head``) is not an error. Text that cannot be encoded (lone surrogates
from file names or footers) is written escaped (``\\udcff``, format/text.py), never a crash.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import gc
import os
import signal
import sys
import time
from types import FrameType

from puffin_cli.cli.exit_codes import (
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
)
from puffin_cli.errors import ErrorKind, PuffinError
from puffin_cli.format.text import escape_standard_streams

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, NoReturn

# The environment variable of click's shell completion for the ``puffin`` script.
COMPLETE_VAR = "_PUFFIN_COMPLETE"
# After a signal, the main thread gets this long to unwind (remove its temp files, print its
# line) before the process ends without it: it may be blocked in C code that never returns.
SIGNAL_GRACE_SECONDS = 2.0


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("PUFFIN_DEBUG", "") not in ("", "0")


def __getattr__(name: str) -> Any:
    """``cli``, the click group, imported (with click) on first use."""
    if name == "cli":
        from puffin_cli.cli.group import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _say(message: str) -> None:
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


# --- signals ------------------------------------------------------------------------------------


class Stopped(BaseException):
    """Raised in the main thread by SIGINT or SIGTERM; not an ``Exception``, so no handler
    meant for bad input swallows it, and not ``KeyboardInterrupt``, which click turns into an
    "Aborted!" of its own."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _exit_code_for_signal(signum: int) -> int:
    return EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_TERMINATED


def _signal_message(signum: int) -> str:
    return "puffin: interrupted" if signum == signal.SIGINT else "puffin: terminated"


def _remove_temp_files() -> None:
    """Remove the temp files of writes under way (the storage layer tracks them; when it was
    never imported, nothing was written)."""
    cleanup = sys.modules.get("puffin_cli.storage.cleanup")
    if cleanup is not None:
        cleanup.remove_tracked()


def _hard_exit(signum: int) -> NoReturn:
    """End now: remove temp files, print the one line, exit (no unwinding)."""
    _remove_temp_files()
    with contextlib.suppress(OSError):
        os.write(2, (_signal_message(signum) + "\n").encode())
    os._exit(_exit_code_for_signal(signum))


_stopping: list[int] = []  # the signal being handled, once one arrived


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _stopping:  # a second signal while unwinding: stop at once
        _hard_exit(signum)
    _stopping.append(signum)

    def watchdog() -> None:  # ends the process if unwinding hangs
        time.sleep(SIGNAL_GRACE_SECONDS)
        _hard_exit(signum)

    # _thread, not threading: its threads never hold up the exit, and it costs no import
    _thread.start_new_thread(watchdog, ())
    raise Stopped(signum)


def _install_signal_handlers() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(signum, _on_signal)
        except ValueError:  # not the main thread (the CLI called from a test's thread)
            return


# --- streams ----------------------------------------------------------------------------------


def _silence_stdout() -> None:
    """Stdout is gone (closed pipe, full device): drop what is still buffered so the exit
    does not fail writing it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


# --- running ------------------------------------------------------------------------------------


def _run_group(args: list[str]) -> int:
    """The click group on ``args``; its exit status. Not ``cli.main``: its handlers would turn
    Ctrl-C into "Aborted!" and a broken pipe into exit 1."""
    import click

    from puffin_cli.cli.grammar import usage_error_lines
    from puffin_cli.cli.group import cli

    try:
        with cli.make_context("puffin", list(args)) as ctx:
            result = cli.invoke(ctx)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:  # a group without a command: its help
        exc.show()
        return EXIT_USAGE
    except click.UsageError as exc:
        for line in usage_error_lines(getattr(exc, "original", exc)):
            _say(line)
        return EXIT_USAGE
    except click.ClickException as exc:
        _say(f"puffin: error: {' '.join(exc.format_message().split())}")
        return exc.exit_code
    return result if isinstance(result, int) else EXIT_OK


def _complete() -> int | None:
    """Shell completion (``_PUFFIN_COMPLETE=bash_source puffin`` prints the script a shell
    sources; the script then asks for completions through the same variable): click's own,
    on the lazy group; ``None`` when the variable is not set."""
    instruction = os.environ.get(COMPLETE_VAR, "")
    if not instruction:
        return None
    from click.shell_completion import shell_complete

    from puffin_cli.cli.group import cli

    return shell_complete(cli, {}, "puffin", COMPLETE_VAR, instruction)


def _run(args: list[str]) -> int:
    from puffin_cli.cli.quick import quick_inspect

    try:
        code = _complete()
        if code is None:
            code = quick_inspect(args)
        if code is None:
            code = _run_group(args)
    except SystemExit as exc:  # a command's own sys.exit(code)
        code = exc.code if isinstance(exc.code, int) else EXIT_OK
    sys.stdout.flush()  # inside the error handling: a full device is an error like any other
    return code


GC_YOUNG_THRESHOLD = 50_000


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI: one line on stderr and an exit code for whatever goes wrong."""
    args = sys.argv[1:] if argv is None else argv
    escape_standard_streams()
    _install_signal_handlers()
    # Importing a command's modules and building its result allocate many objects and few
    # cycles: a young collection every 50,000 allocations rather than every 700 spares start-up
    # its repeated walks (a few ms) and bounds uncollected cycles to a few MiB.
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    try:
        code = _run(args)
    except PuffinError as exc:
        if _debug_requested(args):
            raise
        _say(f"puffin: error: {' '.join(str(exc).splitlines())}")
        code = EXIT_CODES[exc.kind]
    except Stopped as exc:
        _remove_temp_files()
        _say(_signal_message(exc.signum))
        code = _exit_code_for_signal(exc.signum)
    except KeyboardInterrupt:  # a SIGINT that arrived before the handler was installed
        _say(_signal_message(signal.SIGINT))
        code = EXIT_INTERRUPTED
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            # Output piped into a reader that stopped early (e.g. `| head`): not an error.
            _silence_stdout()
            code = EXIT_OK
        else:
            if _debug_requested(args):
                raise
            if exc.filename is None:
                _silence_stdout()
            where = "standard output" if exc.filename is None else os.fsdecode(exc.filename)
            _say(f"puffin: error: {where}: {exc.strerror or exc}")
            code = EXIT_CODES[ErrorKind.IO]
    except Exception as exc:
        if _debug_requested(args):
            raise
        _say(f"puffin: internal error: {type(exc).__name__}: "
             f"{' '.join(str(exc).splitlines())} (run with --debug for the traceback)")
        code = EXIT_INTERNAL
    # What the command built is garbage now, and the process ends: let the collection at exit
    # skip it rather than walk every object (milliseconds for a footer of thousands of blobs).
    gc.freeze()
    sys.exit(code)
