"""Generate docs/cli.md from the ``--help`` of ``puffin`` and of every command.

Run ``python tests/gen_cli_docs.py`` after changing a command; tests/test_cli_docs.py fails
while docs/cli.md is stale. Commands are found by walking the ``puffin`` group (whose commands
are those of ``puffin_cli/cli/commands.py``) and every subgroup, so new commands appear without
editing this script. Help is rendered at a fixed width, so the output does not depend on the
terminal; trailing spaces are dropped.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from puffin_cli.cli.main import cli

DOC_PATH = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
WIDTH = 80
REGENERATE = "python tests/gen_cli_docs.py"
STORAGE = """\
## Locations and object stores

Every file a command names (arguments, `-o/--output`, `--table`, `--positions-file`,
`--values-file`, `--from-parquet`, `--copy-blob`, `--files-from`) and every location inside
table metadata may be a plain path, a `file:` URI, `s3://` (also `s3a://`, `s3n://`),
`gs://`, `abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/...`, `az://CONTAINER/...` or
`http(s)://` (read only). A directory or prefix is searched recursively.

Credentials and endpoints come from each cloud's environment variables (`AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`/`AWS_DEFAULT_REGION`,
`AWS_ENDPOINT_URL` (an `http://` endpoint means plain HTTP and path-style requests),
`AWS_PROFILE` and the `~/.aws` files; `GOOGLE_APPLICATION_CREDENTIALS`;
`AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`, `AZURE_STORAGE_SAS_KEY`), then from
`--io KEY=VALUE` (every command, repeatable) with pyiceberg's FileIO property names:

| property | meaning |
|---|---|
| `s3.endpoint` | S3 endpoint URL (`http://127.0.0.1:9000` for MinIO or a test server) |
| `s3.access-key-id`, `s3.secret-access-key`, `s3.session-token` | AWS credentials |
| `s3.region` | AWS region |
| `s3.force-virtual-addressing` | `true`: virtual-hosted-style requests |
| `s3.anonymous` | `true`: unsigned requests (public buckets) |
| `s3.role-arn`, `s3.role-session-name` | a role assumed with a web identity token |
| `client.access-key-id`, `client.secret-access-key`, ... | the same for S3 (`client.*`) |
| `gcs.service.host`, `gcs.oauth2.token`, `gcs.anonymous` | GCS endpoint, bearer token, unsigned |
| `adls.account-name`, `adls.account-key` | Azure account and key |
| `adls.sas-token`, `adls.connection-string` | Azure SAS token, connection string |
| `adls.tenant-id`, `adls.client-id`, `adls.client-secret` | an Azure service principal |
| `adls.account-host` | the blob endpoint URL (Azurite) |

Reading a Puffin file's metadata from an object costs one suffix-range GET (a second one
only when the footer is larger than 64 KiB). Outputs are create-only: an existing file or
object is replaced only with `--force` (on S3 the upload carries `If-None-Match: *`), a FIFO
or device never; a failed upload leaves nothing behind. Transient errors (5xx, throttling,
timeouts, dropped connections) are retried with backoff up to 5 times."""


def walk() -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """(arguments after ``puffin``, command) for ``puffin`` and every command below it, groups
    before their subcommands, siblings by name."""

    def visit(args: tuple[str, ...], ctx: click.Context
              ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
        command = ctx.command
        yield args, command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is None:
                    raise LookupError(f"{ctx.command_path} lists {name} but cannot load it")
                yield from visit((*args, name), click.Context(sub, info_name=name, parent=ctx))

    yield from visit((), click.Context(cli, info_name="puffin"))


def help_text(args: tuple[str, ...]) -> str:
    """What ``puffin ARGS --help`` prints on an 80-column terminal."""
    result = CliRunner().invoke(cli, [*args, "--help"], prog_name="puffin",
                                terminal_width=WIDTH, max_content_width=WIDTH)
    if result.exit_code != 0:
        raise RuntimeError(f"puffin {' '.join(args)} --help exited {result.exit_code}: "
                           f"{result.output}")
    return "\n".join(line.rstrip() for line in result.output.rstrip("\n").splitlines())


GRAMMAR = """\
## Grammar

Every command follows the same rules (tests/test_cli_grammar.py checks them over every command):

- One spelling per concept: `--snapshot ID` for a table snapshot, `-o/--output FILE` for an
  output file, `-q/--quiet` for "no human output" (no result view, no progress; errors still
  go to stderr, `--json` still writes its document, the exit code says how it went),
  `--table PATH` for an Iceberg table, `--uuid-hash text|bytes` for how uuid values are hashed
  into sketches, with the same default in `write` and `stats compute`: `text`, what Iceberg
  Java's writer of NDV statistics (`compute_table_stats`) produces.
- Output selection is one idea: `--json` writes the command's JSON document instead of the
  human view. Options that pick something else have names of their own: `dump-blob --as`
  (the blob's bytes, hex, positions or sketch description), `scan --file-format` (of the
  `--output` file), `--github` (GitHub Actions annotations; `validate`, `table`, `scan`),
  `inspect --brief` (one line per blob).
- CI checks share their options and exit status: `validate`, `table` and `scan` take
  `--strict` (a warning fails too), `--github` and `-q`, and exit 1 when something failed.
- `--snapshot none` (`write`): blobs that claim no snapshot (snapshot-id -1).
- `--debug` (tracebacks instead of one-line errors; or `PUFFIN_DEBUG=1`) and
  `--color/--no-color` are accepted before or after the command name.
- Human output is fitted to `COLUMNS` when it is set, else to the terminal; for a pipe or a
  file it is not fitted to any width (one fact per line, whole, for `grep`; validate's
  findings are aligned lines, not a table), and nothing but the result is written (live
  progress is on stderr, on a terminal only). Colour: `--color`/`--no-color` when
  given; else none when `NO_COLOR` is set, colour when `FORCE_COLOR` is, else colour on a
  terminal only.
- A usage error is two lines on stderr, the problem (with the closest command or option names
  when one is unknown) and where to get help, and exit status 2.

### Old spellings

The spellings the commands had before this grammar still work, for now: each is rewritten to
its current spelling with a one-line warning on stderr (`puffin: warning: --snapshot-id is
deprecated; use --snapshot`). They are not listed by `--help` and will be removed in a later
release.

| command | old spelling | now |
|---|---|---|"""


def _renamed_rows() -> list[str]:
    """The old-spellings table rows, from each command's ``renamed`` map."""
    rows = []
    for args, command in walk():
        for old, renamed in sorted(getattr(command, "renamed", {}).items()):
            rows.append(f"| `puffin {' '.join(args)}` | `{old}` | `{renamed.now}` |")
    return rows


def render() -> str:
    """The whole of docs/cli.md."""
    commands = [(" ".join(("puffin", *args)), args) for args, _ in walk()]
    lines = [
        "# CLI reference",
        "",
        f"<!-- Generated by `{REGENERATE}` from each command's --help; do not edit. -->",
        "",
        "What `--help` prints for `puffin` and each of its commands, after the grammar they",
        "share. `--json` output is described in [json.md](json.md).",
        "",
        *GRAMMAR.splitlines(),
        *_renamed_rows(),
        "",
        "## Commands",
        "",
        *STORAGE.splitlines(),
        "",
    ]
    for path, _ in commands[1:]:
        indent = "  " * (path.count(" ") - 1)
        lines.append(f"{indent}- [`{path}`](#{path.replace(' ', '-')})")
    for path, args in commands:
        lines += ["", f"### `{path}`", "", "```text", help_text(args), "```"]
    return "\n".join(lines) + "\n"


def main() -> None:
    DOC_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {DOC_PATH}", file=sys.stderr)


if __name__ == "__main__":
    main()
