"""The tests, benchmarks and Makefile read nothing outside the checkout (besides the caches they
create): a quick static guard. The proof is `.ci/run`, which runs `make test` in a clone with
nothing beside it; this test names the offending line before that long run."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for folder in ("tests", "benchmarks", "samples")
                 for p in (REPO / folder).rglob("*.py"))
# Path(__file__) followed by .resolve(), .absolute(), .parent and .parents[N] steps.
CLIMB = re.compile(r"Path\(__file__\)"
                   r"((?:\.resolve\(\)|\.absolute\(\)|\.parent\b|\.parents\[\d+\])*)")
STEP = re.compile(r"\.parent\b|\.parents\[(\d+)\]")


def levels_up(steps: str) -> int:
    return sum(int(m.group(1)) + 1 if m.group(1) is not None else 1 for m in STEP.finditer(steps))


def test_the_climb_counter_sees_a_path_beside_the_checkout() -> None:
    assert levels_up('.resolve().parents[2] / "shared"') == 3
    assert levels_up(".parents[1].parent") == 3
    assert levels_up(".resolve().parent") == 1


def test_no_source_climbs_above_the_checkout_from_its_own_location() -> None:
    assert len(SOURCES) > 50
    above = []
    for path in SOURCES:
        depth = len(path.relative_to(REPO).parts)  # tests/x.py: two steps up is the checkout
        text = path.read_text(encoding="utf-8")
        for match in CLIMB.finditer(text):
            if levels_up(match.group(1)) > depth:
                line = text.count("\n", 0, match.start()) + 1
                above.append(f"{path.relative_to(REPO)}:{line}: {match.group(0)}")
    assert above == []


def test_the_makefile_and_ci_name_no_folder_beside_the_checkout() -> None:
    for name in ("Makefile", ".ci/run"):
        text = (REPO / name).read_text(encoding="utf-8")
        assert re.search(r"\.\./|/shared\b", text) is None, name
