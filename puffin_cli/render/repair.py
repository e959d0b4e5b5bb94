"""Human view of ``puffin repair``: one line per repair (what, which files, why, the finding it
fixes), one per finding left and why, the follow-up commands, and what was committed. Plain
lines (no folding: paths stay whole for copying); ``--json`` is the result's serialization."""

from __future__ import annotations

from rich.console import Console

from puffin_cli.analysis.repair.model import Repair
from puffin_cli.analysis.repair.plan import RepairResult
from puffin_cli.format.text import plural
from puffin_cli.render.layout import plain_lines


def _repair_line(repair: Repair) -> str:
    files = ", ".join(repair.paths)
    return f"  {repair.kind}  {files}: {repair.reason} [{', '.join(repair.finding_codes)}]"


def repair_lines(result: RepairResult) -> list[str]:
    lines = [f"table {result.table} ({result.metadata_file})"]
    if result.apply:
        done = set(result.applied)
        lines.append(f"applied ({len(result.applied)} of {len(result.planned)}):")
        lines.extend(_repair_line(r) for r in result.planned if r in done)
        skipped = [r for r in result.planned if r not in done]
        if skipped:
            lines.append(f"not applied ({len(skipped)}: changed by another writer "
                         "meanwhile, or gone):")
            lines.extend(_repair_line(r) for r in skipped)
    elif result.planned:
        lines.append(f"planned ({len(result.planned)}):")
        lines.extend(_repair_line(r) for r in result.planned)
    if result.unrepairable:
        lines.append(f"left as it is ({len(result.unrepairable)}):")
        lines.extend(f"  {u.finding_code}  {u.path or '-'}: {u.reason}"
                     for u in result.unrepairable)
    if result.follow_ups:
        lines.append("then restore what the repair leaves without:")
        lines.extend(f"  {f.command}    # {f.reason}" for f in result.follow_ups)
    if result.commit is not None:
        name = result.commit.metadata_file.rsplit("/", 1)[-1]
        lines.append(f"committed as {name} ({plural(result.commit.attempts, 'attempt')})")
    if not result.planned:
        lines.append("nothing to repair")
    elif not result.apply:
        lines.append(f"{plural(len(result.planned), 'repair')} pending; run with --apply to "
                     "carry them out in one commit")
    return lines


def repair_view(result: RepairResult, console: Console) -> None:
    plain_lines(console, repair_lines(result))
