"""One grammar over every command (docs/cli.md, "Grammar"): the same concept has the same
option everywhere, output selection is --json, global flags go before or after the command,
old spellings still work with a warning, and usage errors are two lines with suggestions."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from gen_cli_docs import walk

from puffin_cli.cli.commands import SUMMARIES
from puffin_cli.cli.grammar import Command
from puffin_cli.cli.main import cli, main
from puffin_cli.errors import PuffinError

REPO = Path(__file__).resolve().parents[1]
STATS = str(REPO / "samples" / "stats.puffin")
DVS = str(REPO / "samples" / "deletion-vectors.puffin")
COMMANDS = [(" ".join(args), command) for args, command in walk() if args]
RUNNABLE = [(name, command) for name, command in COMMANDS
            if not isinstance(command, click.Group)]
# Spellings retired by the one grammar; each still works as a hidden deprecated alias.
RETIRED = {"--snapshot-id", "--format", "--uuid-as-string", "--uuid-as-bytes", "--metadata"}
# Options whose help must read the same on every command that has them.
SAME_HELP = {"--json", "--quiet", "--uuid-hash", "--max-blob-size", "--relocate", "--conf",
             "--path"}
SHORT = {"-o": "--output", "-q": "--quiet", "-v": "--verbose", "-h": "--help"}
ESCAPE = "\x1b["


def options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params
            if isinstance(p, click.Option) and not p.hidden]


def long_name(option: click.Option) -> str:
    return next(o for o in option.opts if o.startswith("--"))


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_no_command_shows_a_retired_spelling() -> None:
    shown = {(name, o) for name, command in COMMANDS for p in options(command)
             for o in p.opts + p.secondary_opts if o in RETIRED}
    assert shown == set()


def test_one_option_one_spelling_and_one_help() -> None:
    spellings: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    helps: dict[str, set[str]] = defaultdict(set)
    for _, command in COMMANDS:
        for option in options(command):
            spellings[long_name(option)].add(tuple(sorted(option.opts)))
            if long_name(option) in SAME_HELP:
                helps[long_name(option)].add(option.help or "")
    assert {name: s for name, s in spellings.items() if len(s) > 1} == {}
    assert {name: h for name, h in helps.items() if len(h) > 1} == {}


def test_short_flags_mean_one_thing() -> None:
    for name, command in COMMANDS:
        for option in options(command):
            for short in (o for o in option.opts if not o.startswith("--")):
                assert SHORT.get(short) == long_name(option), (name, option.opts)


def test_output_selection_is_json_only() -> None:
    """Every command that runs has --json; no other option chooses an output format."""
    for name, command in RUNNABLE:
        names = {long_name(o) for o in options(command)}
        assert "--json" in names, name
        for option in options(command):
            if isinstance(option.type, click.Choice):
                assert not {"json", "human"} & set(option.type.choices), (name, option.opts)


def test_uuid_hashing_has_one_spelling_and_default() -> None:
    found = {name: option.default for name, command in RUNNABLE for option in options(command)
             if long_name(option) == "--uuid-hash"}
    assert found == {"write": "text", "stats compute": "text"}


def test_every_old_spelling_becomes_a_current_option() -> None:
    for name, command in RUNNABLE:
        assert isinstance(command, Command), name
        current = {o for option in options(command) for o in option.opts}
        for old, renamed in command.renamed.items():
            assert old not in current
            tokens = renamed.rewrite("x" if renamed.takes_value else None)
            assert {t for t in tokens if t.startswith("-")} <= current, (name, old)


@pytest.mark.parametrize(("old", "new"), [
    (["write", "{tmp}/a.puffin", "--theta", "1", "--type", "long", "--values-file", "{values}",
      "--snapshot-id", "7", "--uuid-as-string"],
     ["write", "{tmp}/b.puffin", "--theta", "1", "--type", "long", "--values-file", "{values}",
      "--snapshot", "7", "--uuid-hash", "text"]),
    (["inspect", "--metadata", "{tmp}", STATS], ["inspect", "--table", "{tmp}", STATS]),
    (["validate", "--format", "github", STATS], ["validate", "--github", STATS]),
    (["dump-blob", "--format", "positions", DVS, "0"], ["dump-blob", "--as", "positions", DVS,
                                                         "0"]),
])
def test_old_spellings_still_work_with_a_warning(tmp_path: Path, old: list[str],
                                                 new: list[str]) -> None:
    values = tmp_path / "values.txt"
    values.write_text("1\n2\n")

    def fill(args: list[str]) -> list[str]:
        return [a.format(tmp=tmp_path, values=values) for a in args]

    old_code, old_out, old_err = invoke(*fill(old))
    new_code, new_out, new_err = invoke(*fill(new))
    assert (old_code, old_out.replace("a.puffin", "b.puffin")) == (new_code, new_out)
    assert re.match(r"puffin: warning: --[a-z-]+ is deprecated; use --", old_err)
    assert "deprecated" not in new_err


def test_debug_before_or_after_the_command(tmp_path: Path) -> None:
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"PFA1" + bytes(20))
    for args in (["--debug", "dump-blob", str(bad), "0"], ["dump-blob", str(bad), "0", "--debug"]):
        with pytest.raises(PuffinError):
            main(args)
    with pytest.raises(SystemExit) as exit_info:
        main(["dump-blob", str(bad), "0"])
    assert exit_info.value.code == 1
    done = subprocess.run([sys.executable, "-m", "puffin_cli", "dump-blob", str(bad), "0"],
                          capture_output=True, text=True, check=False,
                          env={"PUFFIN_DEBUG": "1", "PATH": ""})
    assert "Traceback" in done.stderr


@pytest.mark.parametrize(("args", "env", "colored"), [
    (["inspect", STATS], {}, False),
    (["inspect", STATS, "--color"], {}, True),
    (["--color", "inspect", STATS], {}, True),
    (["inspect", STATS], {"FORCE_COLOR": "1"}, True),
    (["inspect", STATS, "--no-color"], {"FORCE_COLOR": "1"}, False),
    (["inspect", STATS], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    (["inspect", STATS, "--color"], {"NO_COLOR": "1"}, True),
])
def test_color_choice(args: list[str], env: dict[str, str], colored: bool) -> None:
    full = {"NO_COLOR": "", "FORCE_COLOR": "", **env}
    code, out, _ = invoke(*args, env=full)
    assert code == 0
    assert (ESCAPE in out) is colored


def test_width_from_columns() -> None:
    def longest(columns: str) -> int:
        out = invoke("inspect", STATS, env={"COLUMNS": columns})[1]
        return max(len(line) for line in out.splitlines())

    assert longest("60") <= 60 < longest("200")
    # Not a terminal, no COLUMNS: not fitted to any width (the footer row is whole).
    footer = next(line for line in invoke("inspect", STATS, env={"COLUMNS": ""})[1].splitlines()
                  if line.startswith("  footer "))
    assert footer.endswith(", not compressed, flags 00000000)") and len(footer) > 80


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_unknown_option_is_two_lines_with_a_suggestion(name: str,
                                                       command: click.Command) -> None:
    known = next((long_name(o) for o in options(command)), "--help")
    typo = known[:-1] + ("x" if known[-1] != "x" else "y")
    code, out, err = invoke(*name.split(), typo)
    assert code == 2 and out == ""
    problem, where = err.splitlines()
    assert problem.startswith(f"puffin {name}: error: no such option '{typo}' (did you mean "
                              f"{known}")
    assert where == f"Try 'puffin {name} --help' for help."


def test_unknown_command_suggests_the_closest() -> None:
    code, _, err = invoke("inspct", STATS)
    assert code == 2
    assert err.splitlines() == ["puffin: error: no such command 'inspct' (did you mean "
                                "inspect?)", "Try 'puffin --help' for help."]
    assert invoke("stats", "compte")[2].splitlines()[0] == (
        "puffin stats: error: no such command 'compte' (did you mean compute?)")
    assert invoke("zzz")[2].splitlines()[0] == "puffin: error: no such command 'zzz'"


def test_help_summaries_are_the_commands() -> None:
    """`puffin --help` lists commands from commands.SUMMARIES without importing them."""
    from puffin_cli.cli.commands import SUMMARIES

    found = {name: command.get_short_help_str(70) for name, command in COMMANDS
             if " " not in name}
    assert found == SUMMARIES
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom puffin_cli.cli.main import "
                           "main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
                           "print(sorted(m for m in sys.modules if m.startswith('puffin_cli.')))"],
                          capture_output=True, text=True, check=True)
    loaded = done.stdout.splitlines()[-1]
    assert "puffin_cli.cli.inspect" not in loaded and "puffin_cli.cli.write" not in loaded


@pytest.mark.parametrize("flags", [[], ["--json"], ["--no-decode"], ["--json", "--no-decode"]])
def test_quick_inspect_prints_what_the_command_prints(tmp_path: Path, flags: list[str]) -> None:
    """`inspect [--json] [--no-decode] FILE...` skips click (cli/quick.py): the same output,
    errors and exit status as through the command (forced here by giving --limit)."""
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"PFA1" + bytes(20))

    def run(*args: str) -> tuple[int, str, str]:
        done = subprocess.run([sys.executable, "-m", "puffin_cli", *args], capture_output=True,
                              text=True, check=False, env={**os.environ, "COLUMNS": "80"})
        return done.returncode, done.stdout, done.stderr

    for files in ([STATS], [DVS, str(bad)]):
        quick = run("inspect", *flags, *files)
        assert quick == run("inspect", "--limit", "20", *flags, *files)
        assert quick[0] == (1 if str(bad) in files else 0)


def test_quick_inspect_leaves_everything_else_to_click() -> None:
    from puffin_cli.cli.quick import quick_inspect

    for args in (["inspect"], ["inspect", "--json"], ["inspect", "--debug", STATS],
                 ["inspect", "--limit", "3", STATS], ["inspect", "-", STATS],
                 ["validate", STATS]):
        assert quick_inspect(args) is None, args


@pytest.mark.parametrize("args", [[], ["stats"]])
def test_a_group_without_a_command_shows_its_help(args: list[str]) -> None:
    code, out, err = invoke(*args)
    assert code == 2 and out == ""
    assert err.startswith("Usage: ") and "Commands:" in err


@pytest.mark.parametrize("value", ["١٢", "1_000", " 12", "-1", "x" * 5000])
def test_integer_options_take_ascii_decimal_digits_only(value: str) -> None:
    # Python's int() takes Arabic-Indic digits, underscores and spaces; an option does not,
    # and a huge bad value is quoted cut, not echoed whole.
    code, out, err = invoke("inspect", "--limit", value, STATS)
    assert code == 2 and out == ""
    problem, _ = err.splitlines()
    assert problem.startswith("puffin inspect: error: invalid value for '--limit': ")
    assert len(problem) < 160


def test_integer_options_still_take_plain_numbers() -> None:
    assert invoke("inspect", "--limit", "3", STATS)[0] == 0
    assert invoke("dump-blob", DVS, "0", "--json", "--limit", "0")[0] == 0


# --- shell completion ---------------------------------------------------------------------


def _complete(instruction: str, words: str = "", cword: str = "") -> list[str]:
    """What `puffin` answers a shell's completion request (click's protocol, through
    ``_PUFFIN_COMPLETE``), as the script runs it: a process of its own."""
    env = {**os.environ, "_PUFFIN_COMPLETE": instruction, "COMP_WORDS": words,
           "COMP_CWORD": cword}
    done = subprocess.run([sys.executable, "-m", "puffin_cli"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.splitlines()


def test_completion_of_commands_options_and_values() -> None:
    # commands come from the lazy group; `inspect` words do not take the quick path
    assert _complete("bash_complete", "puffin ", "1") == [
        f"plain,{name}" for name in sorted(SUMMARIES)]
    assert _complete("bash_complete", "puffin ins", "1") == ["plain,inspect"]
    assert _complete("bash_complete", "puffin inspect --no", "2") == ["plain,--no-decode"]
    assert _complete("bash_complete", "puffin validate --junit", "2") == ["plain,--junit-xml"]
    assert _complete("bash_complete", "puffin dump-blob x.puffin 0 --as ", "5") == [
        "plain,bytes", "plain,hex", "plain,positions", "plain,sketch"]
    assert _complete("bash_complete", "puffin stats ", "2") == ["plain,compute"]
    # files and locations complete as file names; other text does not
    assert _complete("bash_complete", "puffin inspect sam", "2") == ["file,sam"]
    assert _complete("bash_complete", "puffin validate --junit-xml r", "3") == ["file,r"]
    assert _complete("bash_complete", "puffin scan --files-from l", "3") == ["file,l"]
    assert _complete("bash_complete", "puffin write o.puffin --positions ", "4") == [""]
    zsh = _complete("zsh_complete", "puffin validate --prof", "2")
    assert zsh[:2] == ["plain", "--profile"]
    fish = _complete("fish_complete", "puffin tab", "tab")
    assert fish[0].startswith("plain,table")
    # an unknown command is no error while completing: the group's own options are offered
    assert "plain,--version" in _complete("bash_complete", "puffin bogus --", "2")


@pytest.mark.parametrize(("shell", "needle"), [
    ("bash", "complete -o nosort -F _puffin_completion puffin"),
    ("zsh", "compdef _puffin_completion puffin"),
    ("fish", "complete --no-files --command puffin"),
])
def test_completion_scripts(shell: str, needle: str) -> None:
    assert needle in "\n".join(_complete(f"{shell}_source"))


def test_bash_completes_through_the_sourced_script(tmp_path: Path) -> None:
    """The script `eval "$(_PUFFIN_COMPLETE=bash_source puffin)"` defines, run by bash."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "puffin"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m puffin_cli "$@"\n')
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    program = ('eval "$(_PUFFIN_COMPLETE=bash_source puffin)"\n'
               "COMP_WORDS=(puffin val); COMP_CWORD=1; _puffin_completion puffin\n"
               'echo "${COMPREPLY[@]}"\n'
               "COMPREPLY=(); COMP_WORDS=(puffin validate --pro); COMP_CWORD=2\n"
               "_puffin_completion puffin\n"
               'echo "${COMPREPLY[@]}"\n')
    done = subprocess.run(["bash", "--norc", "-c", program], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["validate", "--profile"]
