"""The Map page drawing N points, measured in Debian's Chromium: from the page's request
to the points drawn.

    .venv/bin/python benchmarks/map_draw.py --points 1000000 --json

The draw depends only on the points, so nothing is embedded: a table of N short rows is
written to a fresh Podium home with its projection signal (points in K blobs) and its
topics signal (the blob of each point) written straight into map-ready signal tables.
Then `podium app` runs on that home and Playwright drives the `chromium` binary from the
Debian package (never a downloaded browser) as the browser tests do: each load opens the
Map page in a new tab and reads, in the page, the time (from navigation start) of the
page title (its script has begun to draw), of the chart element, and of
plotly's first `plotly_afterplot` with all the points in the chart, then one more frame
(the WebGL canvas painted). The first load is cold (the app computes the figure); the
next ones reuse what it cached for the snapshot. The load average is reported beside.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

TABLE = "bench.draw"
BATCH = 100_000

# Set before the page's scripts run: once the plot div appears, note when plotly has
# drawn it with every point, and the frame after (the canvas composited).
WATCH = """() => {
  window.__drawn = null;
  const expected = %d;
  const points = (gd) => (gd._fullData || []).reduce((n, t) => n + (t._length || 0), 0);
  const check = () => {
    if (window.__title == null && document.querySelector('h1')) {
      window.__title = performance.now();  // the page's script has begun to draw
    }
    if (window.__chart == null && document.querySelector('[data-testid="stPlotlyChart"]')) {
      window.__chart = performance.now();
    }
    const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
    if (gd && gd._fullLayout && points(gd) >= expected && window.__drawn === null) {
      window.__drawn = {afterplot: performance.now(), points: points(gd), chart: window.__chart,
                       title: window.__title};
      requestAnimationFrame(() => { window.__drawn.painted = performance.now(); });
      return;
    }
    if (gd && !gd.__watched && gd.on) {
      gd.__watched = true;
      gd.on('plotly_afterplot', check);
    }
    if (window.__drawn === null) setTimeout(check, 20);
  };
  check();
}"""


def write_map(points: int, clusters: int, seed: int) -> None:
    """A table of `points` short rows, its projection (K blobs) and topics signals."""
    import numpy as np
    import pyarrow as pa

    from podium.signals.projection import Projection
    from podium.signals.store import Described, signal_table_name, write_signal
    from podium.signals.topics import PROP_TOPICS, Topics
    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_batches

    def rows() -> Iterator[pa.RecordBatch]:
        for start in range(0, points, BATCH):
            n = min(BATCH, points - start)
            yield pa.RecordBatch.from_pylist(
                [
                    {
                        "id": f"r{i:07d}",
                        "messages": [
                            {"role": "user", "content": f"Question {i}"},
                            {"role": "assistant", "content": f"Answer {i}, topic {i % clusters}"},
                        ],
                    }
                    for i in range(start, start + n)
                ],
                schema=SFT_ARROW_SCHEMA,
            )

    table = write_batches(TABLE, rows(), schema=SFT_SCHEMA)
    snap = table.current_snapshot()
    assert snap is not None
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 10, (clusters, 2))

    def blobs() -> Iterator[tuple[pa.Array, Any, Any]]:
        for start in range(0, points, BATCH):
            n = min(BATCH, points - start)
            cluster = (np.arange(start, start + n) % clusters).astype(np.int32)
            xy = (centers[cluster] + rng.normal(0, 1.5, (n, 2))).astype(np.float32)
            ids = pa.array([f"r{i:07d}" for i in range(start, start + n)])
            yield ids, cluster, xy

    def described(signal: str, version: int) -> Described:
        return Described(signal, version, {"seed": seed}, TABLE, snap.snapshot_id)

    write_signal(
        signal_table_name(TABLE, "projection"),
        (
            pa.RecordBatch.from_arrays(
                [ids, pa.array(xy[:, 0]), pa.array(xy[:, 1])], schema=Projection.schema
            )
            for ids, _, xy in blobs()
        ),
        Projection.schema,
        described("projection", Projection.version),
        {},
        lambda: {"rows": points},
    )
    topics = write_signal(
        signal_table_name(TABLE, "topics"),
        (
            pa.RecordBatch.from_arrays(
                [ids, pa.array(c // 4), pa.array(c), pa.array(np.zeros(len(c), np.float32))],
                schema=Topics.schema,
            )
            for ids, c, _ in blobs()
        ),
        Topics.schema,
        described("topics", Topics.version),
        {},
        lambda: {"rows": points},
    )
    titles = [
        {
            "cluster": c,
            "category": c // 4,
            "rows": points // clusters,
            "title": f"blob {c}",
            "description": "",
            "keywords": [],
        }
        for c in range(clusters)
    ]
    with topics.transaction() as tx:
        tx.set_properties({PROP_TOPICS: json.dumps(titles)})


def measure(url: str, points: int, loads: int, shots: Path | None) -> list[dict[str, float]]:
    from app_driver import CHROMIUM_FLAGS  # type: ignore[import-not-found]
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("Debian's chromium is not installed: apt-get install -y chromium")
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        for n in range(loads):
            context = browser.new_context(viewport={"width": 1440, "height": 1000})
            page = context.new_page()
            page.add_init_script(f"({WATCH % points})();")
            page.goto(f"{url}/map?table={TABLE}")
            page.wait_for_function("() => window.__drawn != null", timeout=300_000, polling=50)
            try:  # a frame after the plot (none comes while the tab draws nothing new)
                page.wait_for_function("() => window.__drawn.painted", timeout=5_000)
            except PlaywrightTimeout:
                pass
            drawn = page.evaluate("() => window.__drawn")
            nav = page.evaluate("() => performance.getEntriesByType('navigation')[0].toJSON()")
            out.append(
                {
                    "load": n,
                    "afterplot_s": round(drawn["afterplot"] / 1000, 3),
                    "painted_s": round(drawn["painted"] / 1000, 3) if "painted" in drawn else None,
                    "html_s": round(nav["responseEnd"] / 1000, 3),
                    "title_s": round(drawn["title"] / 1000, 3),
                    "chart_element_s": round(drawn["chart"] / 1000, 3),
                    "points": drawn["points"],
                }
            )
            if shots is not None:
                page.screenshot(path=str(shots / f"map_draw_{points}_{n}.png"))
            context.close()
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=200_000)
    parser.add_argument("--clusters", type=int, default=24)
    parser.add_argument("--loads", type=int, default=3, help="page loads (the first is cold)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--screenshots", type=Path, help="save each load's page here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from app_driver import (
        free_port,
        running,
        server_command,
        wait_healthy,
    )

    home = Path(tempfile.mkdtemp(prefix="podium-map-draw-"))
    report: dict[str, Any] = {"points": args.points, "load_average": [os.getloadavg()[0]]}
    try:
        os.environ["PODIUM_HOME"] = str(home)
        started = time.perf_counter()
        write_map(args.points, args.clusters, args.seed)
        report["write_s"] = round(time.perf_counter() - started, 1)
        port = free_port()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        log = home / "app.log"
        with running(server_command(port), env, ROOT, log) as proc:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(proc, f"{url}/_stcore/health", log)
            report["loads"] = measure(url, args.points, args.loads, args.screenshots)
        report["load_average"].append(os.getloadavg()[0])
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if args.json:
        print(json.dumps(report))
    else:
        for row in report["loads"]:
            print(row)
        print("load average", report["load_average"])


if __name__ == "__main__":
    main()
