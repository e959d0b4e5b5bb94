"""The exit codes of every command, and the one each kind of error ends a run with: 0 ok; 1 a
file is bad, a limit was hit, I/O failed or a check failed; 2 usage error; 3 internal error (a
bug); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM)."""

from __future__ import annotations

from puffin_cli.errors import ErrorKind

EXIT_OK = 0
EXIT_BAD_FILE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

EXIT_CODES = {
    ErrorKind.BAD_FILE: EXIT_BAD_FILE,
    ErrorKind.LIMIT: EXIT_BAD_FILE,
    ErrorKind.IO: EXIT_BAD_FILE,
    ErrorKind.UNSUPPORTED: EXIT_BAD_FILE,
    ErrorKind.BAD_ARGUMENT: EXIT_USAGE,
}
