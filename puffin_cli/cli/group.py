"""The ``puffin`` click group: its global options and the commands of the command table
(cli/commands.py), each imported only when it runs (``puffin --help`` lists them from
:data:`~puffin_cli.cli.commands.SUMMARIES`)."""

from __future__ import annotations

import click

from puffin_cli import __version__
from puffin_cli.cli.commands import SUMMARIES, command
from puffin_cli.cli.grammar import Group, Settings


class LazyGroup(Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUMMARIES)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``puffin --help``, from :data:`SUMMARIES`."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARIES[name]) for name in self.list_commands(ctx)])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return command(cmd_name)


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
      0    everything is fine
      1    a file is bad, a limit was hit, I/O failed, or a check failed
      2    usage error (bad option or argument)
      3    internal error (a bug in puffin-cli; please report it)
      130  interrupted (Ctrl-C); 143 terminated (SIGTERM)
    """
    chosen = ctx.obj if isinstance(ctx.obj, Settings) else Settings()
    chosen.debug = chosen.debug or debug
    chosen.color = chosen.color if color is None else color
    ctx.obj = chosen
