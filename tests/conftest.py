"""Shared fixtures: every test runs against its own Podium home, never ~/.podium."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podium.config import reset_settings

pytest_plugins = ["vllm_fixtures"]

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Ray 2.60 turns token auth on for every later `ray start` once any local `ray.init()`
# has written ~/.ray/auth_token (and sets RAY_AUTH_MODE=token in that process). The test
# clusters, their clients and the jobs on them all run without it, whatever ran before
# (CI: every test Ray head answered 401 after the async RL test's private Ray).
os.environ["RAY_AUTH_MODE"] = "disabled"
# Every test home starts empty; vLLM's cache (its inspection of a model class, keyed by
# vLLM's sources) is shared instead, as one user's servers share it: ~10 s per server
# start. The first start of a run still fills it cold.
os.environ.setdefault("PODIUM_VLLM_CACHE_DIR", str(REPO / ".cache" / "test-vllm-cache"))


# Tests that start vLLM, Ray, a browser, a training run or a whole deployment each keep
# both cores busy, and many wait on the clock (a server's start, a page's redraw, a kill
# at a chosen moment). Under xdist (`make test`: `-n 2 --dist loadgroup`) they form one
# group, "heavy", run one after another on one worker, so two never fight for the cores,
# while the other worker takes the rest file by file (a file's module fixtures are set
# up once). The fault matrix (`clockless`: faults at named points, not at moments) runs
# beside them. Measured 2026-11-28: two heavy groups side by side ran no faster than one
# (together they more than fill both cores), and training tests beside the heavy group
# made the load test and the shared deployment miss their marks.
HEAVY_MARKS = frozenset({"vllm", "ray", "browser", "train", "integration", "faults", "load"})
HEAVY_FIXTURES = frozenset({"vllm_server", "vllm_model", "ray_cluster", "ray_home", "browser"})


# A second heavy group, "heavy-last": the Ray tests, the training runs and the weight
# pushes. The scheduler below hands it out only after every other group, so it runs on
# the worker that finished the light files, beside the end of "heavy". Measured
# 2026-11-28 with the CLI forked: the light files took 28 min of one worker, "heavy" 77 of
# the other (the last 50 alone, a core a third idle); these three are 23 of those 77. The
# tests that time what they do (load, the shared deployment, the browsers: 19 min) run
# first in "heavy", so they are done before "heavy-last" starts.
LAST_GROUP = "heavy-last"
LAST_DIRS = ("tests/ray/", "tests/trainers/", "tests/weight_sync/")
# Files of LAST_DIRS run in "heavy" instead, so that both workers end together: in CI
# (2026-12-01) "heavy" ended at 2,298 s, the light files plus "heavy-last" at 2,502 s
# (1,394 + 1,108); the SFT round trip was 58 s of "heavy-last". Two fresh-clone runs of
# 2026-12-03 ended "heavy" 134 s and 116 s before the other worker (1,591 / 1,725 s and
# 1,840 / 1,956 s): the two weight-push files (two vLLM replicas, no Ray; 54-64 s) moved.
KEPT_HEAVY = (
    "tests/trainers/test_smollm2_roundtrip.py",
    "tests/weight_sync/test_weight_sync.py",
    "tests/weight_sync/test_rolling_push.py",
)
FIRST_DIRS = ("tests/load/", "tests/integration/", "tests/browser/")


def xdist_group_of(item: pytest.Item) -> str:
    """The xdist group `item` runs in: "heavy", "heavy-last", or its file's path."""
    marks = {mark.name for mark in item.iter_markers()}
    fixtures = set(getattr(item, "fixturenames", ()))
    heavy = (marks - {"faults", "integration"} if "clockless" in marks else marks) & HEAVY_MARKS
    path = item.path.relative_to(REPO).as_posix()
    if heavy or fixtures & HEAVY_FIXTURES:
        return LAST_GROUP if path.startswith(LAST_DIRS) and path not in KEPT_HEAVY else "heavy"
    return path


def put_last_group_last(workqueue: Any) -> None:
    """Move "heavy-last" to the end of xdist's queue of units (an OrderedDict), which
    hands out its first unit next."""
    if LAST_GROUP in workqueue:
        workqueue.move_to_end(LAST_GROUP)


# optional: the colocated GRPO test runs the suite's files with a pytest that has no xdist
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's own loadgroup scheduler, except that "heavy-last" is handed out last."""
    if config.getoption("dist", None) != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class HeavyLast(LoadGroupScheduling):
        def _assign_work_unit(self, node: Any) -> None:
            put_last_group_last(self.workqueue)
            super()._assign_work_unit(node)

    return HeavyLast(config, log)


# What the lanes above are balanced by: each worker's time, summed per lane (the heavy
# groups and the light files) from the reports the controller gets, printed at the end
# of a `-n` run. Only `--durations` was printed before, which says nothing of which
# worker ended last.
_lane_seconds: dict[tuple[str, str], float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    node = getattr(report, "node", None)  # set by xdist's controller on a worker's report
    if node is None:
        return
    group = report.nodeid.rpartition("@")[2]
    lane = group if group in ("heavy", LAST_GROUP) else "light"
    key = (node.gateway.id, lane)
    _lane_seconds[key] = _lane_seconds.get(key, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for worker in sorted({worker for worker, _ in _lane_seconds}):
        lanes = {lane: s for (w, lane), s in sorted(_lane_seconds.items()) if w == worker}
        each = ", ".join(f"{lane} {s:.0f} s" for lane, s in lanes.items())
        terminalreporter.write_line(f"lane {worker}: {sum(lanes.values()):.0f} s ({each})")


def _first_dirs_first(item: pytest.Item) -> int:
    path = item.path.relative_to(REPO).as_posix()
    return next((i for i, d in enumerate(FIRST_DIRS) if path.startswith(d)), len(FIRST_DIRS))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put each test in its group, the way xdist's `--dist loadgroup` reads groups: a
    `@GROUP` suffix on the node id. xdist 3.8 writes that suffix to `item._nodeid`, which
    pytest 9 no longer reads (a node id comes from `item._id`), so its own `xdist_group`
    marks silently spread every test over both workers; the suffix is written here."""
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers only
        return
    from _pytest.nodeid import coerce_node_id

    # Stable: a file's tests keep their order, and stay together.
    items.sort(key=_first_dirs_first)
    for item in items:
        item._id = coerce_node_id(f"{item.nodeid}@{xdist_group_of(item)}")


@pytest.fixture(autouse=True, scope="session")
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A default home for the whole session so nothing touches the user's ~/.podium."""
    home = tmp_path_factory.mktemp("session-home")
    old = os.environ.get("PODIUM_HOME")
    os.environ["PODIUM_HOME"] = str(home)
    reset_settings()
    yield home
    if old is None:
        os.environ.pop("PODIUM_HOME", None)
    else:
        os.environ["PODIUM_HOME"] = old
    reset_settings()


@pytest.fixture
def podium_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh, empty Podium home (SQLite catalog + local warehouse) for one test."""
    home = tmp_path / "podium-home"
    monkeypatch.setenv("PODIUM_HOME", str(home))
    reset_settings()
    yield home
    reset_settings()


@pytest.fixture
def stop_servers() -> Iterator[None]:
    """Stop, at teardown, the vLLM servers the test's jobs started in its home: a job
    leaves its server up for the next job (by design), which outlived the test run.
    List it after the fixture that sets the home, so this runs first at teardown."""
    yield
    from podium.models.serving import list_servers, stop_server

    for server in list_servers():
        stop_server(server.model)


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(autouse=True)
def _dev_null_stays_a_device() -> Iterator[None]:
    """Fail the test that replaces /dev/null (it happened once, mid-suite, during sandbox
    and path-trick work); every later test and the machine itself depend on it."""
    yield
    mode = os.lstat("/dev/null").st_mode
    assert stat.S_ISCHR(mode), "this test replaced /dev/null (now not a character device)"


@pytest.fixture(autouse=True)
def _main_module_kept() -> Iterator[None]:
    """Streamlit's AppTest runs a page as `__main__` and leaves `__main__.__file__` on
    its deleted temp script, so a later multiprocessing "spawn" child tried to re-run
    that script and died: put `__main__` back after every test."""
    main = sys.modules["__main__"]
    file = main.__dict__.get("__file__")
    yield
    sys.modules["__main__"] = main
    if file is None:
        main.__dict__.pop("__file__", None)
    else:
        main.__file__ = file


@pytest.fixture(autouse=True)
def _no_app_session_user() -> Iterator[None]:
    """A page run under AppTest registers the browser session's user for the whole
    process (as the Streamlit server does); later tests must act as themselves."""
    yield
    from podium.store.state.users import use_session_user

    use_session_user(None)
