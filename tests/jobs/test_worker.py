"""Real `podium worker` processes: running, failing, cancelling, and surviving kill -9."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from jobs_helpers import group_alive, podium, wait_for

from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.logbook import metrics_frame, samples
from podium.jobs.queue import get_job
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.write.write import write_table


def _submit(front: str) -> str:
    return submit(parse_card(f"---\n{front}\n---\n"))


def test_worker_runs_a_queued_job_with_lineage(jobs_home: Path) -> None:
    write_table("ns.src", pa.table({"x": [1, 2]}))
    snap = load_table("ns.src").current_snapshot().snapshot_id
    job_id = _submit("kind: test-steps\nsteps: 3\ntable: ns.out\nsource: {name: ns.src}")

    result = podium("worker", "--once", "--poll", "0.2")
    assert f"job {job_id}: succeeded" in result.stdout

    job = get_job(job_id)
    assert job["status"] == "succeeded" and job["attempt"] == 1
    assert (job["progress_done"], job["progress_total"]) == (3, 3)
    out_snap = load_table("ns.out").current_snapshot().snapshot_id
    assert job["outputs"]["tables"] == [{"name": "ns.out", "snapshot_id": out_snap}]
    props = load_table("ns.out").properties
    assert props["podium.lineage.job_id"] == job_id
    assert props["podium.lineage.kind"] == "test-steps"
    assert props["podium.lineage.card"] == job["card"]
    assert json.loads(props["podium.lineage.inputs"]) == [f"ns.src@{snap}"]
    assert list(metrics_frame(job_id)["loss"]) == [1.0, 0.5, 1 / 3]
    assert [s["text"] for s in samples(job_id)] == ["sample 0", "sample 1", "sample 2"]
    assert "step 3/3" in Path(job["log_path"]).read_text()


def test_failing_job_records_error_and_commits_nothing(jobs_home: Path) -> None:
    job_id = _submit("kind: test-steps\nsteps: 3\nfail_at: 2\ntable: ns.partial")
    podium("worker", "--once", "--poll", "0.2")
    job = get_job(job_id)
    assert job["status"] == "failed"
    assert job["error"].startswith("RuntimeError: planted failure at step 2")
    assert "--- log tail ---" in job["error"] and "about to fail at step 2" in job["error"]
    assert "Traceback" in Path(job["log_path"]).read_text()
    assert not table_exists("ns.partial")


def test_a_job_that_meets_an_outage_says_so_in_words_not_a_traceback(
    jobs_home: Path,
) -> None:
    """A database gone mid-run is an outage, not a bug: the job's log (which a foreground
    run echoes) and its error say what went away and what to do, as the CLI does."""
    job_id = _submit("kind: test-steps\nsteps: 3\noutage_at: 1")
    podium("worker", "--once", "--poll", "0.2")
    job = get_job(job_id)
    assert job["status"] == "failed"
    log = Path(job["log_path"]).read_text()
    assert "the catalog and state database is unreachable or went away mid-command" in log
    assert "unable to open database file" in log and "Traceback" not in log, log


def test_cancel_stops_a_running_job_and_its_process_group(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    start_worker()
    job_id = _submit("kind: test-steps\nsteps: 500\nsleep: 0.1\ntable: ns.never")
    job = wait_for(lambda: (j := get_job(job_id))["progress_done"] and j["pgid"] and j)
    assert group_alive(job["pgid"])

    assert "cancelling" in podium("jobs", "cancel", job_id).stdout
    wait_for(lambda: get_job(job_id)["status"] == "cancelled", timeout=30)
    wait_for(lambda: not group_alive(job["pgid"]), timeout=15)
    assert not table_exists("ns.never")


def test_worker_killed_mid_job_leaves_job_failed(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    worker = start_worker()
    job_id = _submit("kind: test-steps\nsteps: 500\nsleep: 0.1")
    job = wait_for(lambda: (j := get_job(job_id))["progress_done"] and j["pgid"] and j)

    os.kill(worker.pid, signal.SIGKILL)  # the job's process group lives on, orphaned
    worker.wait()
    wait_for(lambda: not group_alive(job["pgid"]), timeout=30)
    start_worker()
    job = wait_for(lambda: (j := get_job(job_id))["status"] not in ("running",) and j, timeout=60)
    assert job["status"] == "failed"
    assert "worker died" in job["error"]


def test_a_sigkilled_job_fails_with_the_signal_and_its_group_is_stopped(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    """The out-of-memory killer ends a job's process alone: the job must say how it died,
    and what it started in its group (an async RL job's private Ray: dashboard and
    runtime-env agents) must not live on."""
    start_worker()
    job_id = _submit("kind: test-steps\nsteps: 500\nsleep: 0.1\nhelper: true")
    job = wait_for(lambda: (j := get_job(job_id))["progress_done"] and j["pgid"] and j)
    assert group_alive(job["pgid"])

    os.kill(job["pgid"], signal.SIGKILL)  # the job's own process: it leads its group
    job = wait_for(lambda: (j := get_job(job_id))["status"] != "running" and j, timeout=30)
    assert job["status"] == "failed"
    assert job["error"].startswith(
        "the job's process died without recording an outcome "
        "(killed by signal 9, SIGKILL: out of memory? see `dmesg`)"
    )
    shown = podium("jobs", "show", job_id).stdout
    assert "killed by signal 9" in shown
    wait_for(lambda: not group_alive(job["pgid"]), timeout=15)


def test_a_finished_job_whose_process_lingers_is_logged_succeeded_and_killed(
    jobs_home: Path,
) -> None:
    """A job that recorded its success but whose process did not exit (a library's thread)
    is stopped by the worker: the log said "succeeded (exit code -9)", as if the job had
    been killed; the job's record stays succeeded."""
    job_id = _submit("kind: test-steps\nsteps: 1\nlinger: true")
    said = podium("worker", "--once", "--poll", "0.2").stdout
    assert get_job(job_id)["status"] == "succeeded"
    assert (
        f"job {job_id}: succeeded; its process was still running 5 s after the job ended, "
        "ignored SIGTERM and was killed (SIGKILL)"
    ) in said, said
    assert "exit code -9" not in said


def test_a_finished_job_exits_without_waiting_for_the_interpreters_teardown(
    jobs_home: Path,
) -> None:
    """A job whose outcome is recorded ends its process then: a thread left behind (as
    torch's and TRL's teardown held training jobs 3-5 s, past the worker's 5 s grace at
    load) no longer keeps it, and the worker's SIGTERM no longer raised into that
    teardown, where it was ignored until the SIGKILL."""
    job_id = _submit("kind: test-steps\nsteps: 1\nslow_exit: true")
    said = podium("worker", "--once", "--poll", "0.2").stdout
    assert get_job(job_id)["status"] == "succeeded"
    assert f"job {job_id}: succeeded (exit code 0)" in said, said


def test_crash_of_worker_and_job_is_detected_by_stale_heartbeat(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    worker = start_worker()
    plain = _submit("kind: test-steps\nsteps: 500\nsleep: 0.1")
    job = wait_for(lambda: (j := get_job(plain))["progress_done"] and j["pgid"] and j)
    # A machine crash: the worker and the job's whole process group die at once.
    os.kill(worker.pid, signal.SIGKILL)
    os.killpg(job["pgid"], signal.SIGKILL)
    worker.wait()
    assert get_job(plain)["status"] == "running"  # nobody left to say otherwise

    start_worker()
    job = wait_for(lambda: (j := get_job(plain))["status"] != "running" and j, timeout=60)
    assert job["status"] == "failed"
    assert job["error"].startswith("worker died: no heartbeat since")


def test_resumable_job_is_requeued_and_finishes_after_a_crash(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    worker = start_worker()
    job_id = _submit("kind: test-steps-resumable\nsteps: 30\nsleep: 0.1\ntable: ns.resumed")
    job = wait_for(lambda: (j := get_job(job_id))["progress_done"] and j["pgid"] and j)
    os.kill(worker.pid, signal.SIGKILL)
    os.killpg(job["pgid"], signal.SIGKILL)
    worker.wait()

    start_worker()
    job = wait_for(lambda: (j := get_job(job_id))["status"] == "succeeded" and j, timeout=90)
    assert job["attempt"] == 2
    assert load_table("ns.resumed").properties["podium.lineage.job_id"] == job_id


def test_worker_stopped_with_sigterm_fails_or_requeues_its_job(
    jobs_home: Path, start_worker: Callable[..., object]
) -> None:
    for front, expected in (
        ("kind: test-steps\nsteps: 500\nsleep: 0.1", "failed"),
        ("kind: test-steps-resumable\nsteps: 500\nsleep: 0.1", "queued"),
    ):
        worker = start_worker()
        job_id = _submit(front)
        started = wait_for(lambda i=job_id: (j := get_job(i))["progress_done"] and j["pgid"] and j)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
        job = get_job(job_id)
        assert job["status"] == expected, job
        assert not group_alive(started["pgid"])
        if expected == "failed":
            assert "worker shutting down" in job["error"]
