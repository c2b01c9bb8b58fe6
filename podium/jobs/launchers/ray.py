"""The `ray` launch backend: each job is a Ray job on an existing cluster.

    # podium.toml (or PODIUM_LAUNCHER=ray PODIUM_RAY_ADDRESS=...), or `launcher: ray` in a card
    launcher = "ray"
    ray_address = "http://head:8265"      # the cluster's dashboard / job server

Why the Ray Jobs API (`JobSubmissionClient`) and not tasks or actors: a Podium job is
already a process (`python -m podium.jobs.execute JOB_ID`) that reports to the state
database by itself, and the Jobs API runs exactly such a process on the cluster, shows
it in the dashboard and `ray job list`, keeps its output, and stops it (SIGTERM, then
SIGKILL) when asked, without this worker holding a driver connection open. Inside the
job, the heavy kinds use tasks and actors for their own fan-out (vLLM replicas,
sandbox pools: `generators/distributed.py`), connecting with `ray.init()` to the
cluster the job runs on.

The job runs under the first interpreter on the node that can import Podium: the
worker's own (`sys.executable`: the same venv, where the cluster shares this machine's
file system, as a local head does even when `ray start` ran without the venv active),
then `python3` and `python` on the node's PATH. Where none can, it fails at once with
what to do (start the head with the venv active, or install Podium on every node),
instead of "No module named 'podium'".

The job reaches the same catalog and state database because its runtime environment
carries the resolved PODIUM_* settings, except secrets (the OIDC and cookie secrets, a
catalog URL with a password, catalog properties holding keys: Ray's dashboard shows a
job's runtime environment), which each node configures itself; on a cluster of
several machines that means a PostgreSQL catalog and an object-store warehouse (the
embedded SQLite file is only reachable on one machine). A Ray job whose node dies ends
FAILED: `poll` reports it and appends Ray's reason and the job's captured output to the
Podium log, so the worker marks the job failed with that reason (or requeues it, for
kinds that resume).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from podium.config import Settings, get_settings
from podium.errors import InvalidInput
from podium.jobs.kinds import get_kind
from podium.jobs.record import Job
from podium.ray_auth import auth_headers, auth_refused, is_auth_failure

JOB_MODULE = "podium.jobs.execute"
_TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
# Exit codes the worker sees; 143 is what a SIGTERM'd local job reports.
_EXIT = {"SUCCEEDED": 0, "FAILED": 1, "STOPPED": 143}
STOP_WAIT_S = 30


def submission_id(job: Job) -> str:
    """Ray's id for one attempt of a Podium job (a requeued job is submitted again)."""
    return f"podium-{job['id']}-{job.get('attempt') or 1}"


def dashboard_address(settings: Settings | None = None) -> str:
    """The cluster's job server: `ray_address`, else $RAY_API_SERVER_ADDRESS / $RAY_ADDRESS."""
    settings = settings or get_settings()
    address = (
        settings.ray_address
        or os.environ.get("RAY_API_SERVER_ADDRESS", "")
        or os.environ.get("RAY_ADDRESS", "")
    )
    if not address:
        raise InvalidInput(
            "launcher=ray needs the cluster's address: set ray_address in podium.toml or "
            "PODIUM_RAY_ADDRESS (e.g. http://head:8265, the dashboard's job server)."
        )
    return address if "://" in address else f"http://{address}"


# Settings that are secrets, and so never in a job's runtime environment: Ray shows it in
# its dashboard (often unauthenticated) and `ray job list`. The job reads them on its
# node, from the node's own environment or podium.toml, as the worker does.
# ray_auth_token_path too: the worker's token file, read on this side only (the job's
# node has the cluster's own token; podium.ray_auth).
SECRET_SETTINGS = frozenset({"oidc_client_secret", "cookie_secret", "ray_auth_token_path"})
# Catalog properties and URL query parameters that are credentials (s3.secret-access-key,
# s3.session-token, adls.account-key, adls.connection-string (it holds AccountKey=...),
# adls.sas-token, a libpq `?password=`, ...): a name holding any of these words.
_SECRET_WORDS = (
    "secret", "password", "passwd", "token", "credential", "key", "private", "connection-string",
    "sas", "signature",
)  # fmt: skip
# PODIUM_* variables Podium reads that are not settings.
_PLAIN_VARIABLES = ("PODIUM_CONFIG", "PODIUM_FAILPOINTS", "PODIUM_CUDNN_SDPA", "PODIUM_ACCEL")


def job_environment(settings: Settings | None = None) -> dict[str, str]:
    """The PODIUM_* settings a job needs, none of them a secret: this process's, plus the
    resolved home, catalog and warehouse where those carry no credentials.

    Only names Podium knows pass (its settings less `SECRET_SETTINGS`, and
    `_PLAIN_VARIABLES`), so an operator's own PODIUM_* secret is not sent either. A
    catalog URL with a password, or catalog properties holding keys, stay behind: the
    job's node must configure them itself (its environment or podium.toml)."""
    settings = settings or get_settings()
    known = {f"PODIUM_{field.upper()}" for field in type(settings).model_fields} - {
        f"PODIUM_{field.upper()}" for field in SECRET_SETTINGS
    }
    known.update(_PLAIN_VARIABLES)
    env = {k: v for k, v in os.environ.items() if k in known}
    env.pop("PODIUM_CATALOG_URI", None)
    env.pop("PODIUM_CATALOG_PROPERTIES", None)
    env["PODIUM_HOME"] = str(settings.home)
    if not _has_password(settings.catalog_uri):
        env["PODIUM_CATALOG_URI"] = settings.catalog_uri
    if not _has_password(settings.warehouse):
        env["PODIUM_WAREHOUSE"] = settings.warehouse
    else:
        env.pop("PODIUM_WAREHOUSE", None)
    properties = settings.catalog_properties
    if not any(_secret_name(key) or _has_password(value) for key, value in properties.items()):
        env["PODIUM_CATALOG_PROPERTIES"] = json.dumps(settings.catalog_properties)
    env.update(
        PYTHONUNBUFFERED="1",
        # Time for a stopped job to stop what it started on the cluster (vLLM replicas)
        # before Ray's SIGKILL; Ray's default is 3 s.
        RAY_JOB_STOP_WAIT_TIME_S=str(STOP_WAIT_S),
    )
    return env


def _secret_name(name: str) -> bool:
    return any(word in name.lower() for word in _SECRET_WORDS)


def _has_password(url: str) -> bool:
    """Whether a URL carries a credential: a password (postgresql://user:PASSWORD@host/db)
    or a query parameter named like one (`?password=`, `?sslpassword=`, a SAS `sig=`)."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
        names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
        return parts.password is not None or any(_secret_name(n) or n == "sig" for n in names)
    except ValueError:
        return True  # unparsable: assume the worst


def _client(address: str) -> Any:
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError:
        raise InvalidInput(
            "launcher=ray needs Ray: pip install 'podium[cluster]' (or `make test`)."
        ) from None
    try:
        # A cluster with token authentication: the token of ray_auth_token_path.
        return JobSubmissionClient(address, headers=auth_headers() or None)
    except Exception as exc:
        if is_auth_failure(exc):
            raise auth_refused(address, exc) from None
        if not isinstance(exc, ConnectionError | RuntimeError):
            raise
        raise InvalidInput(
            f"No Ray job server answers at {address} ({exc}); start the cluster "
            "(`ray start --head --include-dashboard=true`) or fix ray_address."
        ) from None


def entrypoint(job_id: str, python: str | None = None) -> str:
    """The shell command Ray runs for a job: `python -m podium.jobs.execute JOB_ID` with
    the first of the worker's interpreter, `python3`, `python` that imports Podium."""
    tried = [python or sys.executable, "python3", "python"]
    candidates = " ".join(shlex.quote(p) for p in tried)
    run = f"-m {JOB_MODULE} {shlex.quote(job_id)}"
    fix = (
        f"Podium job {job_id}: no Python on Ray node $(hostname) can import podium "
        f"(tried {', '.join(tried)}). Start the head and workers with Podium's venv active "
        "('source .venv/bin/activate && ray start --head'), or install Podium into the "
        "cluster's Python ('pip install podium[cluster]' on every node)."
    )
    return (
        f"for py in {candidates}; do "
        f'if command -v "$py" >/dev/null 2>&1 && "$py" -c "import podium" >/dev/null 2>&1; '
        f'then exec "$py" {run}; fi; done; '
        f'echo "{fix}" >&2; exit 1'
    )


def _stop_wait(kind: str) -> dict[str, str]:
    """A training run needs its step's time to save before Ray's SIGKILL (kinds.py)."""
    try:
        grace = get_kind(kind).stop_grace_s
    except InvalidInput:  # a plugin kind this worker cannot see
        return {}
    return {"RAY_JOB_STOP_WAIT_TIME_S": str(int(max(STOP_WAIT_S, grace)))}


class RayJob:
    """One submitted attempt, as the worker sees it."""

    pgid: int | None = None  # nothing to signal on this machine

    def __init__(self, job: Job, client: Any, sid: str) -> None:
        self.job_id: str = job["id"]
        self.log_path = Path(job["log_path"])
        self.client = client
        self.sid = sid
        self._code: int | None = None

    def status(self) -> str:
        return str(self.client.get_job_status(self.sid))

    def poll(self) -> int | None:
        if self._code is not None:
            return self._code
        status = self.status()
        if status not in _TERMINAL:
            return None
        self._code = _EXIT[status]
        if status != "SUCCEEDED":
            self._append_ray_output(status)
        return self._code

    def stop(self, grace: float) -> None:
        """Ask Ray to stop the job (SIGTERM to its process group, SIGKILL later)."""
        self.client.stop_job(self.sid)
        deadline = time.monotonic() + max(grace, STOP_WAIT_S) + 10.0  # Ray SIGKILLs by then
        while time.monotonic() < deadline and self.status() not in _TERMINAL:
            time.sleep(0.25)

    def _append_ray_output(self, status: str) -> None:
        info = self.client.get_job_info(self.sid)
        try:
            output = self.client.get_job_logs(self.sid)
        except Exception as exc:  # the log is a courtesy; the status is what counts
            output = f"(could not fetch: {exc})"
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"ray job {self.sid} {status}: {info.message or ''}\n")
            log.write("--- ray job output ---\n" + output[-20_000:] + "\n")


# A head's job agent registers some seconds after its dashboard answers; on a loaded
# 2-core head (seen in a fresh-clone test run) that took more than a minute.
AGENT_WAIT_S = 180.0
_AGENT_STARTING = "No available agent to submit job"


class RayLauncher:
    name = "ray"

    def __init__(self, address: str | None = None) -> None:
        self.address = address or dashboard_address()
        self.client = _client(self.address)

    def launch(self, job: Job) -> RayJob:
        sid = submission_id(job)
        deadline = time.monotonic() + AGENT_WAIT_S
        while True:
            try:
                self.client.submit_job(
                    entrypoint=entrypoint(job["id"]),
                    submission_id=sid,
                    runtime_env={"env_vars": {**job_environment(), **_stop_wait(job["kind"])}},
                    metadata={"podium_job": job["id"], "kind": job["kind"]},
                    entrypoint_num_cpus=0,  # the job's own tasks and actors claim the CPUs
                )
                break
            except RuntimeError as exc:  # Ray wraps HTTP failures in RuntimeError
                if is_auth_failure(exc):
                    raise auth_refused(self.address, exc) from None
                # A head started moments ago answers before its job agent is up (seen in
                # CI): nothing was submitted, so the same submission id is tried again.
                if _AGENT_STARTING in str(exc) and time.monotonic() < deadline:
                    time.sleep(1.0)
                    continue
                raise OSError(f"Ray at {self.address} refused job {sid}: {exc}") from exc
        with Path(job["log_path"]).open("a", encoding="utf-8") as log:
            log.write(f"submitted to Ray at {self.address} as {sid}\n")
        return RayJob(job, self.client, sid)

    def reap_orphan(self, job: Job) -> bool:
        if job.get("launcher") != self.name:
            return False
        sid = submission_id(job)
        try:
            if str(self.client.get_job_status(sid)) in _TERMINAL:
                return False
            return bool(self.client.stop_job(sid))
        except RuntimeError:  # unknown to this cluster
            return False
