"""The `ray` launcher against a real local Ray cluster: run, fail, cancel, a dead job
process; each read back from Podium's Logbook and from Ray's own job list."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import cli_fork
import psutil
import pytest
from conftest import RayCluster, cluster_processes
from ray.job_submission import JobSubmissionClient

from podium.errors import InvalidInput
from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.launchers.ray import RayLauncher, submission_id
from podium.jobs.logbook import metrics_frame
from podium.jobs.queue import get_job, request_cancel
from podium.jobs.worker import Worker
from podium.store.catalog.catalog import load_table, table_exists

pytestmark = pytest.mark.ray


def _submit(front: str) -> str:
    return submit(parse_card(f"---\n{front}\n---\n"))


def _ray_status(cluster: RayCluster, job_id: str) -> str:
    return str(JobSubmissionClient(cluster.address).get_job_status(submission_id(get_job(job_id))))


def _run_worker() -> subprocess.CompletedProcess[str]:
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", "worker", "--once", "--poll", "0.2"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_job_runs_on_ray_and_reports_to_the_logbook(
    ray_home: Path, ray_cluster: RayCluster
) -> None:
    job_id = _submit("kind: test-steps\nsteps: 3\ntable: ns.out")
    result = _run_worker()
    assert "launcher ray" in result.stdout
    assert f"job {job_id}: succeeded" in result.stdout, result.stdout + result.stderr

    job = get_job(job_id)
    assert job["launcher"] == "ray" and job["pgid"] is None
    assert (job["progress_done"], job["progress_total"]) == (3, 3)
    assert list(metrics_frame(job_id)["loss"]) == [1.0, 0.5, 1 / 3]
    assert load_table("ns.out").properties["podium.lineage.job_id"] == job_id
    log = Path(job["log_path"]).read_text()
    assert f"submitted to Ray at {ray_cluster.address}" in log and "step 3/3" in log
    # Ray's own job list has it, under Podium's id, with Podium's metadata.
    listed = {j.submission_id: j for j in JobSubmissionClient(ray_cluster.address).list_jobs()}
    ray_job = listed[submission_id(job)]
    assert str(ray_job.status) == "SUCCEEDED"
    assert ray_job.metadata["podium_job"] == job_id


def test_failing_job_on_ray_is_failed_with_its_reason(ray_home: Path) -> None:
    job_id = _submit("kind: test-steps\nsteps: 3\nfail_at: 1\ntable: ns.partial")
    _run_worker()
    job = get_job(job_id)
    assert job["status"] == "failed"
    assert job["error"].startswith("RuntimeError: planted failure at step 1")
    assert not table_exists("ns.partial")


def test_cancel_from_podium_stops_the_ray_job(ray_home: Path, ray_cluster: RayCluster) -> None:
    job_id = _submit("kind: test-steps\nsteps: 600\nsleep: 0.5")
    with _worker_thread():
        _wait(lambda: (get_job(job_id)["progress_done"] or 0) >= 2, 120)
        assert _ray_status(ray_cluster, job_id) == "RUNNING"
        assert request_cancel(job_id) == "cancelling"
    assert get_job(job_id)["status"] == "cancelled"
    assert _ray_status(ray_cluster, job_id) == "STOPPED"
    done = get_job(job_id)["progress_done"]
    assert done < 600


def test_job_process_killed_on_the_cluster_fails_with_rays_reason(
    ray_home: Path, ray_cluster: RayCluster
) -> None:
    job_id = _submit("kind: test-steps\nsteps: 600\nsleep: 0.5")
    with _worker_thread():
        _wait(lambda: (get_job(job_id)["progress_done"] or 0) >= 1, 120)
        victim = _job_process(ray_cluster, job_id)
        os.kill(victim.pid, signal.SIGKILL)  # the node's copy of the job dies, no goodbye
    job = get_job(job_id)
    assert job["status"] == "failed"
    assert "without recording an outcome" in job["error"]
    assert f"ray job {submission_id(job)} FAILED" in Path(job["log_path"]).read_text()


def test_launcher_without_an_address_says_what_to_set(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("PODIUM_RAY_ADDRESS", "RAY_ADDRESS", "RAY_API_SERVER_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(InvalidInput, match="ray_address"):
        RayLauncher()


@contextlib.contextmanager
def _worker_thread() -> Iterator[Worker]:
    """A worker (launcher from the settings: ray) draining the queue in a thread; on
    leaving, wait for it to finish its jobs."""
    worker = Worker(poll=0.2, say=lambda _: None)
    thread = threading.Thread(target=worker.run, kwargs={"once": True})
    thread.start()
    try:
        yield worker
        thread.join(120)
    finally:
        worker.stop_event.set()
        thread.join(60)


def _job_process(cluster: RayCluster, job_id: str) -> psutil.Process:
    for proc in cluster_processes(cluster.temp_dir):
        try:
            if proc.cmdline()[-3:] == ["-m", "podium.jobs.execute", job_id]:
                return proc
        except psutil.Error:
            continue
    raise AssertionError(f"no process of job {job_id} on the cluster")


def _wait(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("timed out")
