"""Human view of ``puffin repair``: one line per repair (what, which files, why, the finding it
fixes), one per finding left (why, and what the user can do), the follow-up commands, what was
committed, and the verdict (repairs pending, errors left). Files inside the table are named
relative to it, as ``puffin table``'s view names them; plain lines (no folding: paths stay
whole for copying); ``--json`` is the result's serialization, where files are named as the
table metadata names them."""

from __future__ import annotations

from rich.console import Console

from puffin_cli.analysis.repair.model import Repair
from puffin_cli.analysis.repair.plan import RepairResult
from puffin_cli.format.text import plural
from puffin_cli.render.layout import plain_lines
from puffin_cli.render.table import TablePaths


def _repair_line(repair: Repair, paths: TablePaths) -> str:
    files = ", ".join(paths.short(p) for p in repair.paths)
    codes = f" [{', '.join(repair.finding_codes)}]" if repair.finding_codes else ""
    return f"  {repair.kind}  {files}: {paths.message(repair.reason)}{codes}"


def repair_lines(result: RepairResult) -> list[str]:
    paths = TablePaths(result.location, result.path)
    lines = [f"table {result.table} ({paths.short(result.metadata_file)})"]
    if result.apply and result.planned:
        done = set(result.applied)
        lines.append(f"applied ({len(result.applied)} of {len(result.planned)}):")
        lines.extend(_repair_line(r, paths) for r in result.planned if r in done)
        skipped = [r for r in result.planned if r not in done]
        if skipped:
            lines.append(f"not applied ({len(skipped)}: changed by another writer "
                         "meanwhile, or gone):")
            lines.extend(_repair_line(r, paths) for r in skipped)
    elif result.planned:
        lines.append(f"planned ({len(result.planned)}):")
        lines.extend(_repair_line(r, paths) for r in result.planned)
    if result.unrepairable:
        lines.append(f"left as it is ({len(result.unrepairable)}):")
        lines.extend(f"  {u.finding_code}  {paths.short(u.path) if u.path else '-'}: "
                     f"{paths.message(u.reason)}" for u in result.unrepairable)
    if result.follow_ups:
        lines.append("then restore what the repair leaves without:")
        lines.extend(f"  {f.command}    # {paths.message(f.reason)}" for f in result.follow_ups)
    if result.commit is not None:
        name = result.commit.metadata_file.rsplit("/", 1)[-1]
        lines.append(f"committed as {name} ({plural(result.commit.attempts, 'attempt')})")
    errors = result.errors_left
    left = f"{plural(errors, 'error')} left as {'it is' if errors == 1 else 'they are'}"
    if result.pending:
        lines.append(f"{plural(len(result.planned), 'repair')} pending; run with --apply to "
                     "carry them out in one commit" + (f" ({left})" if errors else ""))
    elif errors:
        lines.append(f"{left}: the table still has errors (see what to do above)")
    elif not result.planned:
        lines.append("nothing to repair")
    return lines


def repair_view(result: RepairResult, console: Console) -> None:
    plain_lines(console, repair_lines(result))
