"""The grammar every command shares (docs/cli.md, "Grammar"), in one place.

- ``--debug``, ``--color`` and ``--no-color`` are accepted before or after the command name;
  :class:`Command` takes them out of a command's arguments into :class:`Settings`.
- Old spellings of renamed options keep working for now: :class:`Command` rewrites them to the
  current spelling, with a one-line deprecation warning on stderr. They are not options, so
  ``--help`` does not list them and unknown-option suggestions never propose them.
- An unknown command or option suggests the closest names, and a usage error is two lines:
  the problem, then where to get help (:func:`usage_error_lines`).
- :func:`emit` hands a command's result to the one renderer choice: the JSON document
  (``--json``) or the command's human view.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import click

if TYPE_CHECKING:
    from puffin_cli.render.output import HumanView

# Global flags, accepted anywhere before a ``--``.
DEBUG_FLAG = "--debug"
COLOR_FLAGS = {"--color": True, "--no-color": False}

# An old spelling and how it is now spelled: a function of its value (None for a flag) that
# returns the arguments replacing it.
Rewrite = Callable[[str | None], list[str]]


@dataclass(frozen=True)
class Renamed:
    """An old option spelling: ``takes_value`` says whether it consumed the next argument;
    ``now`` describes the current spelling in the warning."""

    takes_value: bool
    rewrite: Rewrite
    now: str


def renamed_flag(*new: str) -> Renamed:
    """An old flag that is now spelled ``new`` (e.g. ``--uuid-hash bytes``)."""
    return Renamed(False, lambda _value: list(new), " ".join(new))


def renamed_option(new: str) -> Renamed:
    """An old option taking a value that is now the option ``new`` with the same value."""
    return Renamed(True, lambda value: [new, str(value)], new)


def renamed_choice(option: str, choices: dict[str, list[str]], now: str) -> Renamed:
    """An old ``--format``-style option whose value decides the new spelling (an unknown value
    is passed on to ``option`` to be refused there)."""
    return Renamed(True, lambda value: choices.get(str(value), [option, str(value)]), now)


@dataclass
class Settings:
    """What the global flags chose; ``ctx.find_root().obj`` of every run."""

    debug: bool = False
    color: bool | None = None  # None: decided by the environment and the stream


def settings(ctx: click.Context) -> Settings:
    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        root.obj = Settings(debug=os.environ.get("PUFFIN_DEBUG", "") not in ("", "0"))
    return root.obj


def take_global_flags(ctx: click.Context, args: Sequence[str]) -> list[str]:
    """``args`` without the global flags (up to a ``--``), which are recorded in
    :class:`Settings`."""
    chosen = settings(ctx)
    kept: list[str] = []
    for position, arg in enumerate(args):
        if arg == "--":
            kept.extend(args[position:])
            break
        if arg == DEBUG_FLAG:
            chosen.debug = True
        elif arg in COLOR_FLAGS:
            chosen.color = COLOR_FLAGS[arg]
        else:
            kept.append(arg)
    return kept


# Text parameters that name files or locations (by metavar, or a --…-from list): the shell
# completes them as file names.
_LOCATION_METAVARS = frozenset({"FILE", "FILE...", "OUTPUT", "PATH", "PATH...", "[PATH]...",
                                "PATH|GLOB", "SPEC.json", "TABLE"})


class _Location(click.types.StringParamType):
    """Text, completed by the shell as a file name (the value may be any location)."""

    def shell_complete(self, ctx: click.Context, param: click.Parameter,
                       incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(incomplete, type="file")]


_LOCATION = _Location()


class Command(click.Command):
    """A command with the shared grammar: global flags anywhere, old spellings rewritten;
    file and location parameters complete as file names in a shell."""

    def __init__(self, *args: Any, renamed: dict[str, Renamed] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.renamed = renamed or {}
        for param in self.params:
            if type(param.type) is click.types.StringParamType and (
                    param.metavar in _LOCATION_METAVARS or (param.name or "").endswith("_from")):
                param.type = _LOCATION

    def rewrite(self, ctx: click.Context, args: Sequence[str]) -> list[str]:
        out: list[str] = []
        rest = list(args)
        while rest:
            arg = rest.pop(0)
            if arg == "--":
                out += [arg, *rest]
                break
            name, eq, inline = arg.partition("=")
            old = self.renamed.get(name)
            if old is None or (eq and not old.takes_value):
                out.append(arg)
                continue
            value: str | None = None
            if old.takes_value:
                if eq:
                    value = inline
                elif rest:
                    value = rest.pop(0)
                else:
                    raise click.UsageError(f"option '{name}' requires an argument", ctx)
            click.echo(f"puffin: warning: {name} is deprecated; use {old.now}", err=True)
            out += old.rewrite(value)
        return out

    def inspect_args(self, ctx: click.Context, args: list[str]) -> None:
        """A hook that sees the arguments (current spellings only) before they are parsed."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = self.rewrite(ctx, take_global_flags(ctx, args))
        self.inspect_args(ctx, args)
        return super().parse_args(ctx, args)


class ShortUsageError(click.UsageError):
    """A usage error shown as two lines (:func:`usage_error_lines`), exit status 2."""

    def __init__(self, original: click.UsageError) -> None:
        super().__init__(original.message, original.ctx)
        self.original = original

    def show(self, file: Any = None) -> None:
        for line in usage_error_lines(self.original):
            click.echo(line, file=file, err=True)


def _short(exc: click.UsageError) -> click.UsageError:
    """``exc`` as two lines; a group run without a command keeps its help (click's
    ``NoArgsIsHelpError``)."""
    if isinstance(exc, (ShortUsageError, click.exceptions.NoArgsIsHelpError)):
        return exc
    return ShortUsageError(exc)


class Group(click.Group):
    """A group whose unknown commands get the closest names suggested, and whose usage errors
    (its own and its commands') are two lines."""

    command_class = Command

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise _short(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _short(exc) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, take_global_flags(ctx, args))

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if (not name.startswith("-") and not ctx.resilient_parsing  # (shell completion)
                and self.get_command(ctx, name) is None):
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.5)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise click.UsageError(f"no such command '{name}'{hint}", ctx)
        return super().resolve_command(ctx, args)


def usage_error_lines(exc: click.UsageError) -> list[str]:
    """A usage error as two lines: the problem, then where to get help."""
    below = exc.ctx.command_path.split(" ")[1:] if exc.ctx is not None else []
    path = " ".join(["puffin", *below])
    message = exc.format_message()
    if isinstance(exc, click.NoSuchOption):
        message = f"no such option '{exc.option_name}'"
        if exc.possibilities:
            message += f" (did you mean {' or '.join(exc.possibilities)}?)"
    message = " ".join(message.split())
    message = message[:1].lower() + message[1:] if message[1:2].islower() else message
    return [f"{path}: error: {message.rstrip('.')}", f"Try '{path} --help' for help."]


def emit(ctx: click.Context, result: Any, view: HumanView | None = None, *,
         out: TextIO | None = None, document: str | None = None) -> None:
    """Hand ``result`` to the one renderer the user chose: its human ``view`` (which the
    command imports only in the branch that draws), or without one the command's JSON
    document (``document`` names it where one command writes two kinds: ``diff table``); on
    ``out`` (standard output by default)."""
    from puffin_cli.render.output import emit as render

    command = document or ctx.command_path.partition(" ")[2]
    render(command, result, view, color=settings(ctx).color, out=out)
