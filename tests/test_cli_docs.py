"""docs/cli.md is the current --help of every command; every command and option has help text
and every command that runs shows usage examples (parquet-cli style)."""

from __future__ import annotations

import difflib

import click
from gen_cli_docs import DOC_PATH, REGENERATE, help_text, render, walk

from puffin_cli.cli.commands import SUMMARIES

COMMANDS_FOUND = list(walk())


def test_cli_reference_is_current() -> None:
    expected = render()
    actual = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
    if actual != expected:
        diff = difflib.unified_diff(actual.splitlines(), expected.splitlines(),
                                    "docs/cli.md", "generated", lineterm="", n=1)
        shown = "\n".join(list(diff)[:40])
        raise AssertionError(f"docs/cli.md is stale: run `{REGENERATE}`\n{shown}")


def test_reference_covers_every_registered_command() -> None:
    text = DOC_PATH.read_text(encoding="utf-8")
    missing = [name for name in SUMMARIES if f"\n### `puffin {name}`\n" not in text]
    assert not missing, f"docs/cli.md has no section for {missing}: run `{REGENERATE}`"


def test_every_command_and_option_has_help() -> None:
    missing = []
    for args, command in COMMANDS_FOUND:
        path = " ".join(("puffin", *args))
        if not (command.help or command.short_help or "").strip():
            missing.append(path)
        missing += [f"{path} {param.opts[0]}" for param in command.params
                    if isinstance(param, click.Option) and not param.hidden
                    and not (param.help or "").strip()]
    assert not missing, f"no help text: {', '.join(missing)}"


def test_every_runnable_command_shows_examples() -> None:
    """A command's help has an ``Examples:`` paragraph (in its docstring or epilog) with at
    least one line that runs the command. Groups list their commands instead."""
    lacking = []
    for args, command in COMMANDS_FOUND:
        if isinstance(command, click.Group):
            continue
        path = " ".join(("puffin", *args))
        lines = [line.strip() for line in help_text(args).splitlines()]
        after = lines[lines.index("Examples:") + 1:] if "Examples:" in lines else []
        if not any(line.startswith(f"{path} ") for line in after):
            lacking.append(path)
    assert not lacking, f"no 'Examples:' section running the command in --help: {lacking}"


def test_help_has_no_control_characters() -> None:
    """A ``\\b`` marker that click does not consume (one inside a paragraph, not at its start)
    reaches the terminal as a backspace."""
    bad = [" ".join(("puffin", *args)) for args, _ in COMMANDS_FOUND
           if any(ch < " " and ch != "\n" for ch in help_text(args))]
    assert not bad, f"control characters in --help of {bad}"
