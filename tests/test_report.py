"""`rantcp report`: a self-contained HTML page opened by headless Chromium with no console
errors and every figure present, decoded and non-empty."""

from __future__ import annotations

import base64
import html
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import rantcp

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make system-deps installs it)")

# Injected into a copy of the page (the report itself has no scripts): after load, log one
# line with how many images decoded with a non-zero size.
CHECKER = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  const good = imgs.filter(i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0).length;
  document.body.setAttribute("data-images", imgs.length + "/" + good);
  console.log("rantcp-check images=" + imgs.length + " decoded=" + good);
});
</script>"""


def open_in_chromium(page: Path, tmp: Path) -> tuple[str, list[str]]:
    """(the DOM after load, the console lines) of `page` in headless Chromium."""
    copy = tmp / f"checked-{page.name}"
    text = page.read_text(encoding="utf-8")
    assert "</body>" in text
    copy.write_text(text.replace("</body>", CHECKER + "</body>"), encoding="utf-8")
    r = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp / 'chromium-profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
            copy.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    return r.stdout, console


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def check_page(page: Path, tmp: Path) -> int:
    """Assert the page is self-contained and renders cleanly; return its number of figures."""
    text = page.read_text(encoding="utf-8")
    # Self-contained: nothing fetched from elsewhere.
    assert not re.search(r'\b(?:src|href)="(?!data:|#)', text), "external resource"
    assert "<script" not in text
    n_fig = text.count("<figure")
    srcs = re.findall(r'<img[^>]*src="data:image/png;base64,([^"]*)"', text)
    assert n_fig >= 1 and len(srcs) == n_fig
    for s in srcs:
        w, h = png_size(base64.b64decode(s, validate=True))
        assert w > 100 and h > 100

    dom, console = open_in_chromium(page, tmp)
    checks = [c for c in console if "rantcp-check" in c]
    others = [c for c in console if "rantcp-check" not in c]
    assert others == [], f"console messages: {others}"
    assert checks and f"images={n_fig} decoded={n_fig}" in checks[-1], checks
    assert f'data-images="{n_fig}/{n_fig}"' in dom
    assert len(re.findall(r'<img[^>]*src="data:image/png;base64,[A-Za-z0-9+/=]{100,}"', dom)) == n_fig
    return n_fig


@needs_chromium
def test_checker_sees_a_broken_figure_and_a_console_error(tmp_path: Path):
    """The harness itself: a broken image and a script error are caught."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><img src="data:image/png;base64,AAAA"><script>console.error("boom")</script></body></html>')
    dom, console = open_in_chromium(page, tmp_path)
    assert 'data-images="1/0"' in dom
    assert any('"boom"' in c for c in console)


@needs_chromium
def test_run_report_in_chromium(cli, tmp_path: Path):
    out = tmp_path / "run"
    rantcp.run("builtin:p2p-bulk", seed=2, overrides={"duration": "3s", "flow.count": 2, "bottleneck.loss": 1e-3}, out=out)
    r = cli("report", str(out))
    assert r.returncode == 0, r.stderr
    page = out / "report.html"
    assert r.stdout.strip() == str(page)
    n = check_page(page, tmp_path)
    assert n >= 2
    text = page.read_text(encoding="utf-8")
    # The config is there, HTML-escaped (the template engine writes " as &#34;).
    assert "flow1" in text and "router-eth1" in text and '"bottleneck"' not in text
    assert '"bottleneck": {' in html.unescape(text)


@needs_chromium
def test_sweep_report_in_chromium(cli, tmp_path: Path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        '[sweep]\nname = "rep"\nscenario = "builtin:p2p-bulk"\nrepetitions = 2\nseed = 3\n'
        '[set]\nduration = "2s"\n'
        '[axes]\n"flow.cc" = ["newreno", "bbr", "vegas"]\n"bottleneck.loss" = [0.0, 1e-3, 1e-2]\n'
    )
    out = tmp_path / "sw"
    assert cli("sweep", str(spec), "--out", str(out), "--workers", "2", "--quiet").returncode == 0
    r = cli("report", str(out))
    assert r.returncode == 0, r.stderr
    page = out / "report.html"
    n = check_page(page, tmp_path)
    text = page.read_text(encoding="utf-8")
    # metric-vs-axis figures, CDFs and the time series are there; so are the tables and config.
    assert "goodput_mbps against bottleneck.loss, one line per flow.cc" in text
    assert "CDF of goodput_mbps" in text and "Goodput over time" in text
    assert n >= 4
    assert "Failed runs (6)" in text and "unknown variant" in text
    assert "[axes]" in text and "Base scenario (builtin:p2p-bulk)" in text


def test_report_of_a_non_folder_is_one_line(cli, tmp_path: Path):
    r = cli("report", str(tmp_path / "missing"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    (tmp_path / "empty").mkdir()
    r = cli("report", str(tmp_path / "empty"))
    assert r.returncode == 2 and "neither a run folder" in r.stderr


def test_sweep_plot_functions(tmp_path: Path):
    import pandas as pd

    from rantcp import sweep_plots
    from rantcp.sweeps import stats as sweep_mod
    df = pd.DataFrame(
        {
            "status": ["ok"] * 8,
            "x": [1, 1, 10, 10, 1, 1, 10, 10],
            "g": ["a"] * 4 + ["b"] * 4,
            "m": [1.0, 3.0, 5.0, 7.0, 2.0, 2.0, 4.0, 4.0],
        }
    )
    fig = sweep_plots.metric_vs_axis(df, "m", "x", "g")
    ax = fig.axes[0]
    assert [line.get_ydata().tolist() for line in ax.get_lines()] == [[2.0, 6.0], [2.0, 4.0]]
    # The 95 % interval of (1, 3): mean 2 ± t(0.975, 1) * s / sqrt(2) = 2 ± 12.706.
    s = sweep_mod.summarise(df, ["m"], ["g", "x"])
    assert s.loc[0, "m_ci95"] == pytest.approx(12.706)
    assert sweep_plots.png_bytes(fig)[:4] == b"\x89PNG"
    fig = sweep_plots.cdf({"a": [3, 1, 2]}, xlabel="v")
    xs, ys = fig.axes[0].get_lines()[0].get_data()
    assert list(xs) == [1, 2, 3] and list(ys) == pytest.approx([1 / 3, 2 / 3, 1])
    sweep_plots.png_bytes(fig)
    ts = pd.DataFrame({"flow": ["f0"] * 5, "time_s": [0, 1, 2, 3, 4], "goodput_bps": [1e6] * 5})
    fig = sweep_plots.timeseries(ts, "goodput_bps", intervals=[(1.0, 2.0), (3.0, 3.5)], interval_label="NLOS")
    spans = [p for p in fig.axes[0].patches]
    assert len(spans) == 2
    sweep_plots.png_bytes(fig)
    assert sweep_mod.t975(1) == 12.706 and sweep_mod.t975(200) == pytest.approx(1.9719, abs=1e-3)


@pytest.mark.parametrize(
    "axes,captions",
    [
        ({}, ["CDF of goodput_mbps over the runs.", "Goodput over time"]),
        (
            {"flow.cc": ["newreno", "bbr"], "bottleneck.loss": [0.0, 1e-2], "bottleneck.rate": ["20Mbps", "50Mbps"]},
            ["goodput_mbps against bottleneck.loss, one line per flow.cc", "bottleneck.rate held at 20Mbps"],
        ),
    ],
    ids=["no axes", "three axes"],
)
def test_sweep_report_shapes(tmp_path: Path, axes, captions):
    """Sweeps without axes and with more axes than a figure has dimensions still report."""
    from rantcp import report

    spec = {"sweep": {"name": "shape", "scenario": "builtin:p2p-bulk", "repetitions": 2, "seed": 2}, "set": {"duration": "1s"}, "axes": axes}
    if not axes:  # randomness, so that repetitions differ
        spec["set"]["bottleneck.loss"] = 1e-2
    rantcp.sweep(spec, out=tmp_path / "sw", workers=2)
    page = report.write_report(tmp_path / "sw")
    text = page.read_text(encoding="utf-8")
    for c in captions:
        assert c in text
    figures = re.findall(r"Figure \d+\. ([^<]*)", text)
    assert len(figures) == len(set(figures)), "a figure appears twice"
    for s in re.findall(r'src="data:image/png;base64,([^"]*)"', text):
        assert min(png_size(base64.b64decode(s))) > 100
    if CHROMIUM is not None:
        check_page(page, tmp_path)
