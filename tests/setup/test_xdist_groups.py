"""`make test` runs two xdist workers with `--dist loadgroup`; tests/conftest.py names
each test's group. A file's tests stay on one worker (its module fixtures are set up
once), as the heavy group's do (so two heavy tests never run at once); a `clockless`
one runs in its file's group, beside the heavy ones."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SMALL = "tests/store/test_failpoints.py"


def test_a_files_tests_run_on_one_worker_under_its_group() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "-v"]
        + ["-n", "2", "--dist", "loadgroup", SMALL],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    ran = re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED (\S+)", done.stdout)
    assert len(ran) >= 4, done.stdout[-3000:]
    assert all(nodeid.endswith(f"@{SMALL}") for _, nodeid in ran), ran
    assert len({worker for worker, _ in ran}) == 1, ran
    # The lane summary names the worker that ran them, its light files' time summed.
    lane = rf"^lane {ran[0][0]}: \d+ s \(light \d+ s\)$"
    assert re.search(lane, done.stdout, re.M), done.stdout[-800:]


PLUGIN = """
import json, os
from conftest import xdist_group_of
def pytest_collection_finish(session):
    groups = {item.nodeid: xdist_group_of(item) for item in session.items}
    with open(os.environ["GROUPS_OUT"], "w") as fh:
        json.dump(groups, fh)
"""


def _root_conftest(config: pytest.Config) -> Any:
    # by its path: `import conftest` finds whichever conftest was imported last
    return config.pluginmanager.get_plugin(str(REPO / "tests" / "conftest.py"))


def test_clockless_tests_run_beside_the_heavy_group(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    """The groups tests/conftest.py gives: the fault matrix (`clockless`) in its file's
    group, an async RL test in "heavy", a training test and a weight push in
    "heavy-last", a training file kept in "heavy" to even the lanes there. Collected by
    a pytest without xdist: tests/conftest.py's scheduler hook is xdist's, and a pytest
    without xdist (the colocated GRPO test runs the suite's files in a bare venv) must
    still load it."""
    root = _root_conftest(pytestconfig)
    LAST_DIRS, LAST_GROUP, KEPT_HEAVY = root.LAST_DIRS, root.LAST_GROUP, root.KEPT_HEAVY  # noqa: N806
    (tmp_path / "groups_plugin.py").write_text(PLUGIN)
    out = tmp_path / "groups.json"
    files = [
        "tests/faults/test_fault_matrix.py",
        "tests/trainers/test_sft_train.py",
        "tests/weight_sync/test_weight_sync.py",
        "tests/async_rl/test_async_killed.py",
        "tests/trainers/test_smollm2_roundtrip.py",
    ]
    done = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"]
        + ["-p", "no:xdist", "-p", "groups_plugin", *files],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}:{REPO / 'tests'}", "GROUPS_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    groups = json.loads(out.read_text())
    assert {nodeid.split("::")[0] for nodeid in groups} == set(files)
    for nodeid, group in groups.items():
        path = nodeid.split("::")[0]
        last = path.startswith(LAST_DIRS) and path not in KEPT_HEAVY
        expected = LAST_GROUP if last else "heavy"
        assert group == (expected if "fault_matrix" not in path else path), (nodeid, group)
    kept = {g for n, g in groups.items() if n.startswith("tests/trainers/test_smollm2_roundtrip")}
    assert kept == {"heavy"}, kept


def test_the_last_group_is_handed_out_after_every_other_unit(pytestconfig: pytest.Config) -> None:
    from collections import OrderedDict

    root = _root_conftest(pytestconfig)
    LAST_GROUP, put_last_group_last = root.LAST_GROUP, root.put_last_group_last  # noqa: N806

    queue = OrderedDict.fromkeys(["heavy", LAST_GROUP, "tests/a.py", "tests/b.py"], {})
    order = []
    while queue:
        put_last_group_last(queue)
        order.append(queue.popitem(last=False)[0])
    assert order == ["heavy", "tests/a.py", "tests/b.py", LAST_GROUP]
