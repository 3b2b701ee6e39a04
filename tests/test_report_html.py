"""`--format html`: one self-contained page, and the drawings of a warp's request.

The page is parsed with the standard library's HTMLParser for its structure; then,
when Chromium (Debian's `chromium` package) is installed, a real browser renders it:
the DOM it builds must hold the drawings, and a screenshot must come out. Without a
browser those tests skip with the reason."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ptxlint.cli import main
from ptxlint.diagnostics import Diagnostic, Severity
from ptxlint.report import html, links, warp_svg
from ptxlint.report.text import Summary
from ptxlint.source import SourceFile

from .conftest import ROOT
from .test_report_goldens import FIXTURE, SOURCES

BANK_CONFLICT = ("--block", "32,8", "--grid", "32,32", "--param", "2=1024", "--param", "3=1024",
                 "ptx_samples/bank-conflict/column.bad.ptx")
STRIDED = ("--block", "256", "--grid", "64", "ptx_samples/uncoalesced-access/strided.bad.ptx")


class Elements(HTMLParser):
    """Every start tag with its attributes, in order."""

    def __init__(self, page: str):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str, cls: str = "") -> list[dict[str, str]]:
        return [a for t, a in self.tags
                if t == tag and set(cls.split()) <= set(a.get("class", "").split())]


def assert_self_contained(page: str) -> None:
    """Nothing the browser would fetch: no script, no external style, font or image."""
    parsed = Elements(page)
    assert not parsed.find("script") and not parsed.find("link") and not parsed.find("img")
    assert not [a for _, a in parsed.tags if "src" in a]
    assert "@import" not in page and "url(" not in page
    # the only absolute links are anchors to the rules' pages, and the SVG namespace
    hrefs = [a["href"] for a in parsed.find("a")]
    assert all(h.startswith(links.rules_base({})) or "/docs/ci.md#" in h for h in hrefs)


def cli_page(capsys, monkeypatch, *args: str) -> str:
    monkeypatch.chdir(ROOT)
    main(["--format", "html", *args])
    return capsys.readouterr().out


def test_fixture_page_is_self_contained_and_lists_every_finding():
    page = html.render(FIXTURE, SOURCES, Summary(files=3, hidden=2))
    assert page.startswith("<!DOCTYPE html>")
    assert_self_contained(page)
    parsed = Elements(page)
    sections = parsed.find("section", "finding")
    assert len(sections) == len(FIXTURE)
    assert [s["data-rule"] for s in sections] == \
        [d.rule for d in sorted(FIXTURE, key=Diagnostic.sort_key)]
    assert "checked 3 files: 5 errors, 2 warnings, 1 note" in page  # 2 hidden: said too
    assert "(2 notes hidden: --severity note shows them)" in page
    # the PTX line with its span marked, and the CUDA line the finding came from
    assert "\tld.shared.f32 %f1, <mark>[%r4];</mark>" not in page  # the span is 25 wide
    assert "<mark>ld.shared.f32 %f1, [%r4];</mark>" in page
    assert "CUDA source: <code>" in page and "vector_add.cu:9" in page


def test_bank_conflict_drawing_from_the_details():
    page = html.render(FIXTURE, SOURCES)
    svg = Elements(page)
    assert len(svg.find("svg", "warp bank-conflict")) == 1
    assert len(svg.find("rect", "lane")) == 32 and len(svg.find("rect", "bank")) == 32
    assert len(svg.find("rect", "lane hit")) == 2  # details: lanes {0, 1}
    assert len(svg.find("rect", "bank worst")) == 1
    assert len(svg.find("rect", "word worst")) == 32  # 32 ways: 32 words, one per pass
    assert len(svg.find("path", "link")) == 2


def test_bank_conflict_drawing_with_per_lane_addresses():
    """What the rule could record: each lane's byte offset. A 128-byte row stride
    puts every lane in bank 0; 8-byte accesses are served a half-warp at a time."""
    rows = warp_svg.bank_conflict(
        {"ways": 32, "bank": 0, "addresses": [128 * lane for lane in range(32)]}, "ld.shared.f32")
    parsed = Elements(rows)
    assert len(parsed.find("rect", "word worst")) == 32 and len(parsed.find("path", "link")) == 32
    wide = Elements(warp_svg.bank_conflict(
        {"ways": 16, "addresses": [256 * lane for lane in range(32)]}, "ld.shared.v2.f32"))
    assert len(wide.find("path", "phase")) == 2  # two phases of 16 lanes
    # a phase's 16 lanes each take words 64*i and 64*i+1: 16 passes in banks 0 and 1
    assert len(wide.find("rect", "word worst")) == 16 and len(wide.find("rect", "word")) == 32
    assert warp_svg.access_width("@%p1 ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r1];") == 16
    assert warp_svg.access_width("st.global.u8 [%rd1], %rs1;") == 1


def uncoalesced(details: dict, insn: str = "ld.global.f32 %f1, [%rd4];") -> Elements:
    text = f".version 9.0\n\t{insn}\n"
    src = SourceFile("k.ptx", text)
    d = Diagnostic("uncoalesced-access", Severity.WARNING, "m", "k.ptx",
                   src.span(text.index("["), text.index(";")), details=details)
    return Elements(html.render([d], {"k.ptx": text}))


def test_uncoalesced_drawing_lanes_against_sectors():
    # 32 lanes 128 bytes apart: one sector in each of 32 lines
    far = uncoalesced({"sectors_per_request": 32, "ideal_sectors_per_request": 4,
                       "stride_bytes": 128})
    assert len(far.find("svg", "warp uncoalesced-access")) == 1
    assert len(far.find("rect", "line")) == 32 and len(far.find("rect", "sector hit")) == 32
    assert len(far.find("rect", "sector")) == 128 and len(far.find("path", "link")) == 32
    # 8 bytes apart: 256 bytes, two lines, all 8 sectors
    near = uncoalesced({"sectors_per_request": 8, "ideal_sectors_per_request": 4,
                        "stride_bytes": 8})
    assert len(near.find("rect", "line")) == 2 and len(near.find("rect", "sector hit")) == 8
    # a stride known only at run time: the counts as bars
    bars = uncoalesced({"sectors_per_request": 32, "ideal_sectors_per_request": 4,
                        "stride_bytes": None, "parameter": "width"})
    assert len(bars.find("rect", "sector hit")) == 32
    assert len(bars.find("rect", "sector ideal")) == 4


def test_command_line_page_draws_each_finding(capsys, monkeypatch):
    page = cli_page(capsys, monkeypatch, *BANK_CONFLICT)
    assert_self_contained(page)
    parsed = Elements(page)
    # the four loads of one CUDA line are one finding: one drawing, the others listed
    assert len(parsed.find("svg", "warp bank-conflict")) == 1
    assert len(parsed.find("rect", "lane hit")) == 32  # 32 ways of 4 bytes: every lane
    assert "also at 106:22, 111:22, 114:22" in page
    strided = Elements(cli_page(capsys, monkeypatch, *STRIDED))
    assert len(strided.find("svg", "warp uncoalesced-access")) >= 3


# ---------------------------------------------------------------- in a real browser
def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium found (Debian: apt-get install chromium)")


def browser(*args: str) -> subprocess.CompletedProcess:
    """Headless Chromium, offline (every host name unresolvable), in a fresh profile."""
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
                           "--no-first-run", *args], capture_output=True, text=True,
                          timeout=120)


def test_page_renders_in_chromium(tmp_path, capsys, monkeypatch):
    page = cli_page(capsys, monkeypatch, *BANK_CONFLICT, STRIDED[-1])
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    profile = f"--user-data-dir={tmp_path / 'profile'}"
    dom = browser(profile, "--dump-dom", path.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = Elements(dom.stdout)  # what the browser built, not what was written
    assert len(parsed.find("svg", "warp bank-conflict")) == 1  # one finding, 4 loads
    assert len(parsed.find("svg", "warp uncoalesced-access")) >= 3
    assert len(parsed.find("rect", "bank worst")) == 1
    shot = tmp_path / "page.png"
    out = browser(profile, f"--screenshot={shot}", "--window-size=1100,1400", path.as_uri())
    assert out.returncode == 0 and shot.is_file(), out.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1100, 1400)
    if os.environ.get("PTXLINT_SAVE_SCREENSHOT"):  # how docs/images/warp.png is made
        Path(os.environ["PTXLINT_SAVE_SCREENSHOT"]).write_bytes(png)


def test_readme_shows_the_screenshot():
    readme = (ROOT / "README.md").read_text()
    image = re.search(r"!\[[^\]]+\]\((docs/images/warp\.png)\)", readme)
    assert image and (ROOT / image.group(1)).is_file()
