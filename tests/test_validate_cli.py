"""`puffin validate` through click: path expansion, output formats, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import SAMPLES

from puffin_cli.cli.main import cli
from puffin_cli.format import PuffinError, PuffinWriter

GOOD = str(SAMPLES / "public" / "deletion-vector-v1.puffin")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["validate", *args])
    return result.exit_code, result.output


def files_of(out: str) -> list[Any]:
    """The file reports of a ``validate --json`` document."""
    document = json.loads(out)
    assert list(document)[:2] == ["schema-version", "command"]
    files: list[Any] = document["files"]
    return files


def make(path: Path, codec: str | None = None, compress_footer: bool = False) -> Path:
    writer = PuffinWriter(path, compress_footer=compress_footer)
    writer.add_blob("x-test", b"abc" * 20, fields=[1], codec=codec)
    writer.finish()
    return path


def broken(path: Path) -> Path:
    path.write_bytes(b"PFA1" + bytes(30))
    return path


def test_valid_file_exits_0_with_only_the_summary() -> None:
    code, out = run(GOOD)
    assert code == 0
    assert out.splitlines() == ["1 file checked (profile spec): 1 passed, 0 failed; 0 errors, "
                                "0 warnings, 0 info"]
    code, out = run("--verbose", GOOD)
    assert code == 0
    assert out.splitlines()[0].startswith("ok ")
    assert out.splitlines()[-1].startswith("1 file checked")


def test_findings_for_a_pipe_are_aligned_lines(tmp_path: Path) -> None:
    """Off a terminal (no ``COLUMNS``) a file's findings are aligned lines, no box drawn and
    no message folded; with ``COLUMNS`` (a width to fit) they are a table."""
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"PFA1" + b"x" * 35 + b"PFA1")  # a footer size of 2,021,161,080 bytes
    lz4 = make(tmp_path / "lz4.puffin", compress_footer=True)
    result = CliRunner().invoke(cli, ["validate", str(bad), str(lz4)], env={"COLUMNS": ""})
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert not any(mark in result.stdout for mark in "┃│┏━")
    head = lines.index("  severity  code                 blob  offset  message")
    error = lines[head + 1]
    assert error.startswith("  error     footer.payload-size ") and error.endswith(
        ", before the end of the leading magic at 4)")
    warning = next(line for line in lines if line.startswith("  warning   footer.lz4 "))
    assert warning.endswith("but Iceberg Java, iceberg-rust and pyiceberg cannot read it")
    boxed = CliRunner().invoke(cli, ["validate", str(bad)], env={"COLUMNS": "60"}).stdout
    table = [line for line in boxed.splitlines() if line[:1] in "┏┃┡│└"]
    assert len(table) > 5 and max(len(line) for line in table) <= 60


def test_many_files_show_the_failures_and_name_them(tmp_path: Path) -> None:
    for number in range(30):
        make(tmp_path / f"good{number:02}.puffin")
    (tmp_path / "sub").mkdir()
    bad = [broken(tmp_path / "bad1.puffin"), broken(tmp_path / "sub" / "bad2.puffin")]
    code, out = run(str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert not [line for line in lines if line.startswith("ok")]
    assert [line for line in lines if line.startswith("FAIL")] == [
        f"FAIL {path}  (1 error, 0 warnings, 0 info)" for path in bad]
    assert lines[-4:] == ["failed (2):", f"  {bad[0]}", f"  {bad[1]}",
                          "32 files checked (profile spec): 30 passed, 2 failed; 2 errors, "
                          "0 warnings, 0 info"]
    verbose = run("--verbose", str(tmp_path))[1].splitlines()
    assert len([line for line in verbose if line.startswith("ok ")]) == 30


def test_broken_file_exits_1_and_shows_each_finding(tmp_path: Path) -> None:
    code, out = run(str(broken(tmp_path / "bad.puffin")), GOOD)
    assert code == 1
    assert "FAIL" in out and "footer.magic" in out
    assert out.splitlines()[-1].startswith("2 files checked (profile spec): 1 passed, 1 failed;")


def test_directory_is_searched_recursively(tmp_path: Path) -> None:
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    make(sub / "one.puffin")
    make(tmp_path / "two.stats")
    make(tmp_path / "three.bin")  # no Puffin suffix, but starts with PFA1
    (tmp_path / "notes.txt").write_text("not puffin")
    code, out = run("--json", str(tmp_path))
    assert code == 0
    paths = [Path(r["path"]).relative_to(tmp_path).as_posix() for r in files_of(out)]
    assert paths == ["three.bin", "two.stats", "a/b/one.puffin"]


def test_glob_pattern_and_path_option(tmp_path: Path) -> None:
    make(tmp_path / "x1.puffin")
    make(tmp_path / "x2.puffin")
    code, out = run("--json", str(tmp_path / "x*.puffin"), "--path", GOOD)
    assert code == 0
    assert [Path(r["path"]).name for r in files_of(out)] == [
        "x1.puffin", "x2.puffin", "deletion-vector-v1.puffin"]


def test_duplicates_are_checked_once(tmp_path: Path) -> None:
    _, out = run("--json", GOOD, GOOD)
    assert len(files_of(out)) == 1


@pytest.mark.parametrize("args", [[], ["/no/such/file.puffin"], ["/no/such/*.puffin"],
                                  ["--profile", "spark", GOOD], ["--format", "xml", GOOD],
                                  ["--json", "--github", GOOD]])
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert run(*args)[0] == 2


def test_empty_directory_is_a_usage_error(tmp_path: Path) -> None:
    code, out = run(str(tmp_path))
    assert code == 2
    assert "no Puffin files found" in out


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    path = str(make(tmp_path / "lz4.puffin", codec="lz4"))
    assert run(path)[0] == 0
    assert run("--strict", path)[0] == 1


def test_profile_turns_lz4_into_an_error(tmp_path: Path) -> None:
    path = str(make(tmp_path / "f.puffin", compress_footer=True))
    code, out = run("--profile", "pyiceberg", "--json", path)
    assert code == 1
    [report] = files_of(out)
    assert [f["code"] for f in report["findings"]] == ["profile.pyiceberg.compressed-footer"]
    assert run("--profile", "trino", path)[0] == 0


def test_json_report_schema(tmp_path: Path) -> None:
    code, out = run("--json", str(broken(tmp_path / "bad.puffin")))
    assert code == 1
    bad = str(tmp_path / "bad.puffin")
    assert json.loads(out) == {
        "schema-version": 1, "command": "validate", "profile": "spec", "strict": False,
        "files": [{
            "path": bad, "profile": "spec", "file-size": 34,
            "footer-size": None, "blob-count": None, "errors": 1, "warnings": 0, "infos": 0,
            "findings": [{"code": "footer.magic", "severity": "error",
                          "message": "footer end magic is 00000000, expected 50464131 (PFA1)",
                          "offset": 30, "blob-index": None}]}],
        "checked": 1, "passed": 0, "failed": 1, "errors": 1, "warnings": 0, "infos": 0,
        "failed-files": [bad]}


def test_old_format_option_still_works_with_a_warning(tmp_path: Path) -> None:
    bad = str(broken(tmp_path / "bad.puffin"))
    result = CliRunner().invoke(cli, ["validate", "--format", "json", bad])
    assert result.exit_code == 1
    assert result.stderr == "puffin: warning: --format is deprecated; use --json or --github\n"
    assert json.loads(result.stdout) == json.loads(run("--json", bad)[1])
    github = CliRunner().invoke(cli, ["validate", "--format=github", bad])
    assert github.stdout.startswith("::error file=")


def test_github_annotations(tmp_path: Path) -> None:
    bad = tmp_path / "a,b:c.puffin"
    broken(bad)
    code, out = run("--github", str(bad))
    assert code == 1
    escaped = str(bad).replace(":", "%3A").replace(",", "%2C")
    assert out.splitlines()[0] == (
        f"::error file={escaped},title=footer.magic::footer end magic is 00000000, expected "
        "50464131 (PFA1) (byte 30)")


def test_quiet_prints_nothing(tmp_path: Path) -> None:
    assert run("-q", str(broken(tmp_path / "bad.puffin"))) == (1, "")
    assert run("--quiet", GOOD) == (0, "")


def test_help_lists_the_options() -> None:
    code, out = run("--help")
    assert code == 0
    for option in ("--profile", "--strict", "--verbose", "--github", "--json", "--quiet",
                   "--path", "--max-blob-size"):
        assert option in out
    assert "--format" not in out


def test_installed_script_never_prints_a_traceback(tmp_path: Path) -> None:
    paths = [broken(tmp_path / "bad.puffin"), tmp_path / "empty.puffin", tmp_path / "rand.puffin"]
    paths[1].write_bytes(b"")
    paths[2].write_bytes(bytes(range(256)) * 3)
    result = subprocess.run([sys.executable, "-m", "puffin_cli", "validate",
                             *map(str, paths)], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("3 files checked (profile spec): 0 passed")


# --- --junit-xml ------------------------------------------------------------------------------

REPO_SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _junit(path: Path) -> Any:
    import junitparser

    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 1
    return suites[0]


def test_junit_xml_a_case_per_file_and_a_failure_per_error(tmp_path: Path) -> None:
    import junitparser

    bad = broken(tmp_path / "bad.puffin")
    warned = REPO_SAMPLES / "lz4-footer.puffin"
    good = REPO_SAMPLES / "stats.puffin"
    report = tmp_path / "report.xml"
    code, out = run("--junit-xml", str(report), "--json", str(good), str(warned), str(bad))
    assert code == 1
    document = {f["path"]: f for f in files_of(out)}  # --json still writes its document
    suite = _junit(report)
    assert (suite.name, suite.tests, suite.failures, suite.errors) == ("puffin validate", 3, 1, 0)
    cases = {case.name: case for case in suite}
    assert list(cases) == [str(good), str(warned), str(bad)]
    assert cases[str(good)].is_passed and cases[str(warned)].is_passed
    failures = cases[str(bad)].result
    errors = [f for f in document[str(bad)]["findings"] if f["severity"] == "error"]
    assert len(failures) == len(errors) >= 1
    assert all(isinstance(f, junitparser.Failure) for f in failures)
    assert [(f.type, f.message) for f in failures] == [(e["code"], e["message"])
                                                       for e in errors]
    assert "footer.lz4" in cases[str(warned)].system_out
    # --strict fails on warnings, as validate's exit code does; an existing report needs --force
    code, out = run("--strict", "--junit-xml", str(report), "--github", str(warned))
    assert code == 1
    assert out == ""
    exists = CliRunner().invoke(cli, ["validate", "--junit-xml", str(report), str(warned)])
    assert isinstance(exists.exception, PuffinError) and "exists" in str(exists.exception)
    code, out = run("--strict", "--force", "--junit-xml", str(report), "--github", str(warned))
    assert code == 1
    assert out.startswith("::warning ")
    strict = _junit(report)
    case = next(iter(strict))
    assert strict.failures == 1 and [f.type for f in case.result] == ["footer.lz4"]


def test_junit_xml_escapes_what_xml_cannot_hold(tmp_path: Path) -> None:
    """Lone surrogates and control characters (from a footer's escapes, a file name that is not
    UTF-8) are written escaped: the report stays well-formed XML."""
    from helpers import blob_entry, puffin_bytes

    payload = json.dumps({"blobs": [blob_entry(4, 0, type="t\ud800\x01", properties={
        "k\udcff": "v"})], "properties": {"created-by": "\x07"}})
    name = Path(os.fsdecode(os.fsencode(tmp_path) + b"/odd\xff.puffin"))
    name.write_bytes(puffin_bytes(payload) + b"x")  # trailing garbage: an error finding
    report = tmp_path / "report.xml"
    done = subprocess.run([sys.executable, "-m", "puffin_cli", "validate", "--junit-xml",
                           str(report), str(name)], capture_output=True, timeout=60)
    assert done.returncode == 1, done.stderr
    suite = _junit(report)
    (case,) = list(suite)
    assert case.name.endswith("odd\\udcff.puffin")
    assert case.result and all(f.message for f in case.result)
