"""Every command's ``--json`` document: an object that starts with ``schema-version`` and
``command``, equal to its golden file (tests/golden/), every key documented in docs/json.md
with the version documented there."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from golden.regenerate import CASES, EXIT_CODES, GOLDEN, golden_path, run_case

from puffin_cli.render.jsonout import SCHEMA_VERSIONS

DOC = (Path(__file__).resolve().parents[1] / "docs" / "json.md").read_text(encoding="utf-8")
# The stats compute golden is pinned by tests/test_stats_spark.py (it needs Spark).
GOLDENS = sorted(GOLDEN.glob("*.json"))


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_document_matches_golden(name: str, tmp_path: Path) -> None:
    code, document = run_case(name, tmp_path)
    assert code == EXIT_CODES.get(name, 0)
    assert document == _load(golden_path(name))


def test_every_command_has_a_golden_document() -> None:
    commands = {_load(path)["command"] for path in GOLDENS}
    assert commands == set(SCHEMA_VERSIONS)


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.stem)
def test_document_is_an_object_with_schema_version_first(path: Path) -> None:
    document = _load(path)
    assert isinstance(document, dict)
    assert list(document)[:2] == ["schema-version", "command"]
    assert document["schema-version"] == SCHEMA_VERSIONS[document["command"]]


def test_documented_versions_are_the_code_s() -> None:
    rows = dict(re.findall(r"^\| `([a-z -]+)` \| (\d+) \|$", DOC, re.MULTILINE))
    assert {name: int(version) for name, version in rows.items()} == SCHEMA_VERSIONS


def test_every_key_is_documented() -> None:
    documented = set(re.findall(r"`([a-z0-9-]+)`", DOC))
    keys: set[str] = set()

    def walk(value: Any, free: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if not free:
                    keys.add(key)
                # properties, unknown footer keys and partition values hold data's own keys
                walk(item, key in ("properties", "extra", "partition"))
        elif isinstance(value, list):
            for item in value:
                walk(item, False)

    for path in GOLDENS:
        walk(_load(path), False)
    assert keys - documented == set()
