"""The finding codes in the docs and the ones the code emits are the same list: every code
docs/validate.md (finding codes, engine profiles) and docs/table.md (cross-checks) document is
emitted by some test (as a finding, or as the error validate reports as that finding), and
every code a finding was made with during the tests is documented. Findings and errors made in
this process are recorded by conftest.py; this module runs last. Codes written literally where
a finding is made are checked against the docs without running anything."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import EMITTED, FACTLESS, RAISED

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
CODE = re.compile(r"[a-z]+(\.[a-z0-9][a-z0-9-]*)+")
# Where each document lists finding codes: from the first heading to the second.
SECTIONS = {"docs/validate.md": ("## Finding codes", "## `--json` output"),
            "docs/table.md": ("## Cross-checks", "## Deletion-vector containers")}
# Calls that make a finding from a literal code as their first argument.
MAKERS = {"Finding", "add", "_meta_finding", "_fail"}


def documented() -> set[str]:
    codes: set[str] = set()
    for name, (start, end) in SECTIONS.items():
        text = (REPO / name).read_text(encoding="utf-8")
        section = text[text.index(start):text.index(end)]
        for line in section.splitlines():
            if line.startswith("| `"):
                codes |= {c for c in re.findall(r"`([^`]+)`", line.split("|")[1])
                          if CODE.fullmatch(c)}
    return codes


def literal_codes() -> dict[str, str]:
    """Code -> where, for every finding made with a literal code in puffin_cli."""
    found: dict[str, str] = {}
    for path in sorted((REPO / "puffin_cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (name in MAKERS and isinstance(first, ast.Constant)
                    and isinstance(first.value, str) and CODE.fullmatch(first.value)):
                found.setdefault(first.value, f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_the_docs_list_codes_of_every_family() -> None:
    families = {code.split(".")[0] for code in documented()}
    assert {"file", "footer", "json", "blob", "dv", "theta", "paimon", "profile", "table",
            "internal"} <= families


def test_literal_finding_codes_are_documented() -> None:
    codes = literal_codes()
    assert len(codes) > 20  # the scan finds the makers
    assert {code: where for code, where in codes.items() if code not in documented()} == {}


def test_documented_codes_are_emitted_by_tests_and_emitted_codes_documented(
        request: pytest.FixtureRequest) -> None:
    session = request.session
    ran = {Path(str(item.path)) for item in session.items}
    if len(session.items) != session.testscollected or not set(TESTS.glob("test_*.py")) <= ran:
        pytest.skip("compares the codes the whole suite emits: run every file of tests/")
    docs = documented()
    assert sorted(docs - EMITTED - RAISED) == [], "documented, but no test emits it"
    assert sorted(EMITTED - docs) == [], "made in a test, but not documented"


def test_every_table_finding_made_carries_its_facts() -> None:
    """``puffin repair`` and scripts read a table finding's files and snapshot from its facts,
    never from its message: no ``table.*`` finding made in the tests lacks them."""
    assert sorted(FACTLESS) == []
