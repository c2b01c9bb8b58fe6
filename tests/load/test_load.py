"""Load, short and seeded: 3 sessions for 20 s on 3,000 rows of ~7 KiB through one
`podium up --app-processes 2` (two Streamlit processes behind the sticky proxy), beside
one session alone, in each mode (Streamlit's protocol spoken directly, then Chromium
tabs), and 12 export jobs queued to two workers. `make load` runs the full size
(tests/load/load_run.py). Nothing here asserts on time: the figures go to
test-artifacts/load-ci.json; the checks are that no session saw an error, that the three
sessions were served by both processes, and that every job ran exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from load_run import run

pytestmark = [pytest.mark.load, pytest.mark.browser]


def test_sessions_and_queue_under_load(podium_home: Path, artifacts_dir: Path) -> None:
    podium_home.mkdir(parents=True)
    report = run(
        podium_home,
        rows=3000,
        count=3,
        seconds=20,
        lone_seconds=10,
        jobs=12,
        seed=7,
        app_processes=2,
    )
    (artifacts_dir / "load-ci.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    for mode in ("protocol", "browser"):
        lone, many = report[mode]["lone"], report[mode]["concurrent"]
        assert lone["errors"] == [], mode
        assert lone["page_changes"] > 0 and many["page_changes"] > 0, mode
        assert many["actions"].get("label", 0) > 0, mode
        assert many["errors"] == [], mode
        # Both processes did the sessions' work (the proxy spreads new sessions and
        # keeps each on its process): neither sat idle while the other served all three.
        cpu = many["app_process_cpu_s"]
        assert len(cpu) == 2 and min(cpu) >= 0.2 * max(cpu), (mode, cpu)
    assert report["queue"]["problems"] == []
