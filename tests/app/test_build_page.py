"""The Build page with AppTest on real tables: settings, a verify run from the page with
the real local sandbox, and results with failures, timeouts and mismatches highlighted."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_pages import shown
from queue_runner import run_queued
from streamlit.testing.v1 import AppTest

from generators.code_exec import tables
from generators.code_exec.demo_functions import load_demo_functions
from podium.jobs.queue import list_jobs
from podium.store.write.write import write_table

MAIN = str(Path(__file__).resolve().parents[2] / "podium" / "app" / "main.py")
CODE = "def f(xs):\n    return sorted(xs)\n"


def _rows() -> None:
    def row(i: int, inp: str | None, out: str | None, status: str, error: str | None = None):
        return {
            "id": f"r{i}",
            "function_id": f"fn{i}",
            "entry_point": "f",
            "code": CODE,
            "input": inp,
            "raw_input": inp or "os.system('x')",
            "output": out,
            "status": status,
            "error": error,
            "wall_s": 0.01,
            "cpu_s": 0.01,
            "model": "m",
            "backend": "local",
            "created_at": tables.now(),
        }

    rows = [
        row(1, "[3, 1, 2]", "[1, 2, 3]", "ok"),
        row(2, "[2, 2, 1]", "[2, 1, 2]", "ok"),  # a tampered output: verify must flag it
        row(3, "[1]", None, "timeout", "timeout"),
        row(4, "None", None, "error", "TypeError: 'NoneType' object is not iterable"),
        row(5, None, None, "rejected", "not a list of Python literals"),
    ]
    write_table(
        "cx.built",
        tables.to_arrow(rows, tables.ROWS_ARROW_SCHEMA),
        properties={"podium.kind": tables.ROWS_KIND, "podium.lineage.input": "x@1"},
    )


@pytest.fixture
def home(podium_home: Path) -> Path:
    load_demo_functions()
    _rows()
    return podium_home


def _open() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.run()
    at.switch_page("views/build/view.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_results_highlight_failures_and_timeouts(home: Path) -> None:
    at = _open()
    assert at.selectbox(key="build.table").value == "demo.functions"
    assert at.selectbox(key="build.show").value == "cx.built"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Rows": "5", "OK": "2", "Failures": "3", "Timeouts": "1"}
    # Which sandbox ran the code (the page never said).
    assert "Ran in the local sandbox backend." in [shown(c.value) for c in at.caption]
    text = _markdown(at)
    assert ":orange[**timeout**] · fn3 · `f([1])`" in text
    assert ":red[**error**] · fn4 · `f(None)` · TypeError" in text
    assert ":gray[**rejected**] · fn5 · proposed `os.system('x')`" in text
    # Failures come first: the timeout line precedes the error line.
    assert text.index("**timeout**") < text.index("**error**] · fn4")
    at.multiselect(key="build.filter.cx.built").set_value(["timeout"]).run()
    assert "**error**] · fn4" not in _markdown(at)


def test_build_mode_without_a_model_offers_to_set_one_up(home: Path) -> None:
    at = _open()
    assert [b.label for b in at.button] == ["Set up the base model"]  # not a shell command


@pytest.mark.sandbox
def test_verify_run_from_the_page_flags_the_changed_output(home: Path) -> None:
    at = _open()
    at.radio(key="build.mode").set_value("verify").run()
    assert at.selectbox(key="build.table").value == "cx.built"
    at.selectbox(key="build.job.backend").set_value("local")
    at.button(key="FormSubmitter:build.job-Queue job").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [j["status"] for j in list_jobs()] == ["queued"]  # the page ran nothing itself
    run_queued()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (job,) = [j for j in list_jobs() if j["kind"] == "code-exec-build"]
    assert job["status"] == "succeeded"
    assert at.selectbox(key="build.show").value == "cx.built_verify"
    text = _markdown(at)
    assert (
        ":red[**mismatch**] · fn2 · `f([2, 2, 1])` · expected `[2, 1, 2]`, got `[1, 2, 2]`" in text
    )
    assert {m.label: m.value for m in at.metric}["Rows"] == "2"  # only ok rows are re-checked
