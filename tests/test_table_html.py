"""``puffin table --html``: a table's snapshots as one self-contained page, loaded in headless
Chromium (tests/browser.py) with every network request refused: the rendered DOM has each chart
with one point per snapshot, hovering shows the snapshot, and the screenshot is not blank."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import dump_dom, screenshot
from click.testing import CliRunner
from s3server import S3Server
from tables.synthetic import TableBuilder, dv_table

from puffin_cli.cli.main import cli
from puffin_cli.render.html import _clip

REPO = Path(__file__).resolve().parents[1]
ASSETS = REPO / "puffin_cli" / "render" / "assets"
NPM_UPLOT = REPO / ".npm-tools" / "node_modules" / "uplot"
CHARTS = ["rows", "files", "statistics", "ndv", "freshness", "findings"]


def size_bound(snapshots: int, columns: int) -> int:
    """The page's size bound as docs/table.md states it, for one table without findings."""
    return 64 * 1024 + 1024 + snapshots * (400 + 21 * columns)


def stats_table(root: Path, snapshots: int) -> TableBuilder:
    """``dv_table`` with statistics (field IDs 1 and 2) for every fifth snapshot."""
    table = dv_table(root, snapshots=snapshots, dvs_per_snapshot=1, carry=False)
    for i, snap in enumerate(table.snapshots):
        if i % 5 == 0:
            table.statistics_file(snap["snapshot-id"], {1: list(range(10 * i + 3)),
                                                        2: list(range(i % 4 + 1))})
    table.finish()
    return table


def write_page(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["table", *args])
    assert result.exit_code == code, result.output
    return result.stdout


def charts(dom: str) -> dict[str, list[int]]:
    """Each chart's name -> the point counts of its occurrences (one per table)."""
    found: dict[str, list[int]] = {}
    for name, points in re.findall(r'<div class="chart" data-chart="([a-z]+)" '
                                   r'data-points="(\d+)"', dom):
        found.setdefault(name, []).append(int(points))
    return found


@pytest.mark.browser
def test_vendored_uplot_is_npms() -> None:
    """The charting library the page inlines is npm's uplot 1.6.32, byte for byte (`make
    setup` installs it into .npm-tools)."""
    assert json.loads((NPM_UPLOT / "package.json").read_text())["version"] == "1.6.32"
    for name in ("uPlot.iife.min.js", "uPlot.min.css"):
        assert (ASSETS / name).read_bytes() == (NPM_UPLOT / "dist" / name).read_bytes()
    assert (ASSETS / "uPlot.LICENSE").read_bytes() == (NPM_UPLOT / "LICENSE").read_bytes()


@pytest.mark.browser
def test_page_renders_in_chromium_with_a_point_per_snapshot(tmp_path: Path) -> None:
    from PIL import Image

    table = stats_table(tmp_path / "t", 30)
    page = tmp_path / "report.html"
    out = write_page("--all-snapshots", "--html", str(page), str(table.root))
    size = page.stat().st_size
    assert out == f"wrote {page}: {size:,} bytes, 30 snapshots of 1 table\n"
    text = page.read_text(encoding="utf-8")
    # self-contained: no element names anything to fetch
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=|<link\b", text)
    dom = dump_dom(page)
    assert 'data-ready="1"' in dom
    assert charts(dom) == {name: [30] for name in CHARTS}
    assert dom.count("<canvas") == len(CHARTS)
    assert len(re.findall(r'<tr id="s-0-\d+"', dom)) == 30
    # the NDV chart's series are the columns, by name
    assert 'class="u-label">id<' in dom and 'class="u-label">customer<' in dom
    shot = Image.open(screenshot(page, tmp_path / "shot.png")).convert("RGB")
    assert shot.size == (1280, 2400)
    colours = shot.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50  # lines, labels, table: not one flat colour
    inked = sum(shot.convert("L").resize((128, 240)).histogram()[:200])  # darker pixels
    assert inked > 128 * 240 // 50


@pytest.mark.browser
def test_hovering_a_point_shows_snapshot_operation_and_time(tmp_path: Path) -> None:
    """The page's own hover handler, driven as a pointer move drives it (uPlot's setCursor)."""
    table = stats_table(tmp_path / "t", 12)
    page = tmp_path / "report.html"
    write_page("--all-snapshots", "--html", str(page), str(table.root))
    hovered = tmp_path / "hovered.html"
    hovered.write_text(page.read_text(encoding="utf-8").replace("</body>", (
        "<script>var u = window.puffinCharts[0];"
        "u.setCursor({left: u.valToPos(7, 'x'), top: 40});</script></body>")),
        encoding="utf-8")
    dom = dump_dom(hovered)
    snap = table.snapshots[7]
    tip = re.search(r'<div class="tip"[^>]*>([^<]*)</div>', dom)
    assert tip is not None and "hidden" not in tip.group(0)
    assert tip.group(1) == (f"snapshot {snap['snapshot-id']} · append · "
                            "2023-11-14 22:13:20 UTC")


@pytest.mark.browser
def test_no_snapshot_one_snapshot_and_findings_render(tmp_path: Path) -> None:
    """A warehouse of three tables on one page: one without a snapshot, one with a single
    snapshot, one whose statistics entry names a wrong size (an error finding), the finding
    linked to its snapshot's row."""
    warehouse = tmp_path / "warehouse"
    TableBuilder(warehouse / "a_empty").finish()
    dv_table(warehouse / "b_one", snapshots=1, dvs_per_snapshot=1, carry=False).finish()
    broken = stats_table(warehouse / "c_findings", 3)
    broken.statistics[0]["file-size-in-bytes"] += 1
    broken.finish()
    page = tmp_path / "report.html"
    write_page("--all-snapshots", "--html", str(page), str(warehouse), code=1)
    dom = dump_dom(page)
    sections = re.findall(r'<section class="table" data-snapshots="(\d+)"', dom)
    assert sections == ["0", "1", "3"]
    assert "No snapshot to show" in dom
    # the one-snapshot table has no statistics: no NDV chart, said in words
    assert charts(dom) == {name: [3] if name == "ndv" else [1, 3] for name in CHARTS}
    assert dom.count("<p class=\"note\">No NDV to chart") == 1
    first = broken.snapshots[0]["snapshot-id"]
    assert re.search(rf'<tr class="sev-error"><td>error</td><td>table.stats.size</td>'
                     rf'<td><a href="#s-2-{first}">{first}</a></td>', dom)
    assert f'<tr id="s-2-{first}">' in dom


@pytest.mark.browser
def test_a_page_of_1000_snapshots_is_within_its_size_bound_and_renders(tmp_path: Path) -> None:
    table = stats_table(tmp_path / "t", 1000)
    page = tmp_path / "report.html"
    write_page("--all-snapshots", "--html", str(page), str(table.root))
    assert page.stat().st_size <= size_bound(1000, columns=2)
    dom = dump_dom(page)
    assert 'data-ready="1"' in dom
    assert charts(dom) == {name: [1000] for name in CHARTS}
    assert len(re.findall(r'<tr id="s-0-\d+"', dom)) == 1000


def test_page_size_grows_with_snapshots_not_with_data_files_or_dvs(tmp_path: Path) -> None:
    """20 snapshots of one DV each, and 20 snapshots of which the last holds 400 DVs of 400
    data files: the pages differ only by the digits of the counts charted."""
    sizes = []
    for name, dvs, carry in (("few", 1, False), ("many", 20, True)):
        dv_table(tmp_path / name, snapshots=20, dvs_per_snapshot=dvs, carry=carry).finish()
        page = tmp_path / f"{name}.html"
        write_page("--all-snapshots", "--html", str(page), str(tmp_path / name))
        sizes.append(page.stat().st_size)
    assert 0 <= sizes[1] - sizes[0] <= 20 * 5 * 3  # 5 counts, at most 3 more digits each
    assert sizes[1] <= size_bound(20, columns=0)


def test_long_texts_are_clipped() -> None:
    """Finding messages and operations, the page's only texts per finding and per snapshot."""
    assert _clip("x" * 16, 16) == "x" * 16
    assert _clip("x" * 17, 16) == "x" * 15 + "…"


def test_page_to_an_object_store_is_create_only(tmp_path: Path, s3_server: S3Server) -> None:
    table = stats_table(tmp_path / "t", 3)
    s3_server.client().create_bucket(Bucket="pages")
    target = "s3://pages/reports/t.html"

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "puffin_cli", "table", "--all-snapshots",
                               "--html", target, *extra, str(table.root)],
                              capture_output=True, text=True, timeout=120,
                              env=s3_server.env(), check=False)

    first = run()
    assert first.returncode == 0, first.stderr
    body = s3_server.client().get_object(Bucket="pages", Key="reports/t.html")["Body"].read()
    assert body.startswith(b"<!DOCTYPE html>") and b'"id":["1001","1002","1003"]' in body
    again = run()
    assert (again.returncode, again.stderr) == (
        1, f"puffin: error: {target}: exists; use --force to overwrite it\n")
    assert run("--force").returncode == 0


def test_html_excludes_jsonl(tmp_path: Path) -> None:
    table = stats_table(tmp_path / "t", 1)
    result = CliRunner().invoke(cli, ["table", "--html", str(tmp_path / "p.html"), "--jsonl",
                                      str(table.root)])
    assert result.exit_code == 2
    assert not (tmp_path / "p.html").exists()
