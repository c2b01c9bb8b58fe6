"""The shared deployment end to end: PostgreSQL catalog and state, an S3 warehouse, two
workers on their own homes claiming from one queue, and two people of different roles.

import -> browse (page, search, SQL) -> validate -> generate (real vLLM) -> train
(cpu-smoke SFT) -> compare -> vote, every step through the real CLI or the functions
the app calls, every job through the shared queue.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from shared_stack import SharedStack, shared_stack, wait_until, workers  # type: ignore[import-not-found]

from podium.config import reset_settings
from podium.store.read.file_plan import FilePlan
from podium.store.read.read import open_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.vllm, pytest.mark.train]

OPERATOR = "op@team.example"
VIEWER = "viewer@team.example"
WORKER = "worker@team.example"  # the workers' own identity: jobs run as their submitter

# JSON answers, so the validation job has something to pass and the data is trainable.
ROWS = [
    {
        "id": f"r{i}",
        "messages": [
            {"role": "user", "content": f"Give colour number {i} as JSON."},
            {"role": "assistant", "content": json.dumps({"colour": f"c{i}"})},
        ],
    }
    for i in range(8)
]
# ... and one malformed answer for the validation job to find.
ROWS.append(
    {
        "id": "r8",
        "messages": [
            {"role": "user", "content": "Give colour number 8 as JSON."},
            {"role": "assistant", "content": '{"colour": c8'},
        ],
    }
)

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def stack(
    vllm_server, base_checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[SharedStack, str]]:
    """The stack, this test process acting in it as the operator; yields the URL of the
    session's vLLM server (read before the settings switch to the stack)."""
    served_url = vllm_server.base_url
    with shared_stack(tmp_path / "stack") as st:
        for key, value in st.env("tester", OPERATOR).items():
            monkeypatch.setenv(key, value)
        reset_settings()
        try:
            yield st, served_url
        finally:
            reset_settings()


def _wait_finished(job_ids: list[str], timeout: float) -> None:
    from podium.jobs.queue import get_job
    from podium.jobs.tables import FINISHED

    wait_until(
        lambda: all(get_job(j)["status"] in FINISHED for j in job_ids), timeout, f"jobs {job_ids}"
    )


def _plan(name: str) -> FilePlan:
    return open_snapshot(name)[1]


def _claims(job_id: str) -> list[str]:
    from podium.jobs.logbook import events

    return [e["message"] for e in events(job_id) if e["message"].startswith("claimed by worker")]


@pytest.mark.timeout(2700)  # a shared 2-core machine: training and a second vLLM start
def test_shared_deployment_end_to_end(stack: tuple[SharedStack, str], base_checkpoint: Path):
    from podium.compare.table import load_comparison
    from podium.compare.votes import blind_pair, cast_vote, list_votes
    from podium.errors import PermissionDenied
    from podium.identity import User
    from podium.jobs.logbook import events
    from podium.jobs.queue import get_job, list_jobs
    from podium.models import get_model
    from podium.store.catalog.catalog import table_exists
    from podium.store.read.query import page
    from podium.store.read.sql_console import run_sql
    from podium.store.state.users import resolve

    st, served_url = stack
    root = st.root

    # An admin (named in settings) gives the two people their roles.
    st.ok(st.admin, "users", "grant", OPERATOR, "operator")
    st.ok(st.admin, "users", "grant", VIEWER, "viewer")
    st.ok(st.admin, "users", "grant", WORKER, "viewer")
    assert resolve(VIEWER, "config").role == "viewer"

    # Import: the viewer is refused and nothing is created; the operator's commit lands on S3.
    st.files.mkdir()
    data = st.files / "colours.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    refused = st.podium(VIEWER, "import", str(data), "--table", "team.sft")
    assert refused.returncode != 0 and "has role 'viewer'" in refused.stderr, refused.stderr
    assert not table_exists("team.sft")
    st.ok(OPERATOR, "import", str(data), "--table", "team.sft")
    plan = _plan("team.sft")
    assert plan.total == len(ROWS)
    assert plan.files and all(f.path.startswith(st.warehouse + "/") for f in plan.files)
    keys = st.object_keys()
    assert {".parquet", ".json"} <= {Path(k).suffix for k in keys}, keys
    # Nothing fell back to a local warehouse in anyone's home.
    assert not list(root.glob("*/warehouse"))

    # Browse as the viewer: a page, a search and SQL, read from S3.
    shown = json.loads(
        st.ok(VIEWER, "show", "team.sft", "--search", "number 3", "--limit", "5", "--json")
    )
    assert [r["id"] for r in shown["rows"]] == ["r3"], shown
    sql = json.loads(st.ok(VIEWER, "sql", "SELECT count(*) AS n FROM team.sft", "--json"))
    assert sql == [{"n": len(ROWS)}], sql
    first = page("team.sft", limit=3, offset=5)
    assert [r["id"] for r in first.rows] == ["r5", "r6", "r7"]
    assert run_sql("SELECT max(id) AS m FROM team.sft").to_pylist() == [{"m": "r8"}]

    # Models in the shared registry: the session's vLLM as an endpoint, SmolLM2 to train.
    st.ok(OPERATOR, "models", "add-endpoint", served_url, "--name", "served-base")
    st.ok(OPERATOR, "models", "add", str(base_checkpoint), "--name", "smollm2", "--base")

    # The operator writes three cards; the viewer may not queue one.
    cards = st.files / "cards"
    cards.mkdir()
    st.ok(OPERATOR, "validate", "team.sft", "--rule", "json", "--card", str(cards / "validate.md"))
    st.ok(
        OPERATOR, "generate", "--model", "served-base", "--table", "team.sft",
        "--out", "team.samples", "--limit", "2", "--max-tokens", "8", "--temperature", "0",
        "--card", str(cards / "generate.md"),
    )  # fmt: skip
    st.ok(
        OPERATOR, "train", "sft", "--model", "smollm2", "--table", "team.sft",
        "--out", "team-smoke", "--preset", "cpu-smoke", "--steps", "2", "--batch-size", "2",
        "--eval-fraction", "0", "--card", str(cards / "train.md"),
    )  # fmt: skip
    refused = st.podium(VIEWER, "submit", str(cards / "validate.md"))
    assert "has role 'viewer'" in refused.stderr and "run job" in refused.stderr, refused.stderr
    assert [j["kind"] for j in list_jobs()] == ["import"]  # the operator's, nothing queued

    with workers(st, 2, WORKER) as procs:
        # Both workers are polling: three jobs queued at once go to both.
        first_ids = [
            st.ok(OPERATOR, "submit", str(cards / f"{k}.md")).split()[-1]
            for k in ("validate", "generate", "train")
        ]
        _wait_finished(first_ids, 1500)
        st.ok(
            OPERATOR, "compare", "--models", "served-base,team-smoke", "--table", "team.sft",
            "--out", "team.cmp", "--limit", "2", "--max-tokens", "8",
            "--card", str(cards / "compare.md"),
        )  # fmt: skip
        compare_id = st.ok(OPERATOR, "submit", str(cards / "compare.md")).split()[-1]
        _wait_finished([compare_id], 1200)
        # A job records its own outcome; its worker notices the exit a poll later.
        wait_until(
            lambda: all(any(f"job {j}: " in w.output for w in procs) for j in first_ids),
            120,
            "the workers to see their jobs exit",
        )
        wait_until(lambda: any(f"job {compare_id}: " in w.output for w in procs), 120, "compare")
        outputs = [w.output for w in procs]
        pids = [str(w.proc.pid) for w in procs]

    # Every job ran exactly once, by exactly one of the two workers, for the operator.
    job_ids = [*first_ids, compare_id]
    for job_id in job_ids:
        job = get_job(job_id)
        assert (job["status"], job["attempt"]) == ("succeeded", 1), (job_id, job["error"])
        assert job["submitted_by"] == OPERATOR
        assert [e["status"] for e in events(job_id)] == ["queued", "running", "succeeded"]
        claims = _claims(job_id)
        assert len(claims) == 1 and claims[0].split()[3] in pids, claims
        assert sum(f"job {job_id}: succeeded" in out for out in outputs) == 1
    claimants = {_claims(j)[0].split()[3] for j in first_ids}
    assert claimants == set(pids), "both workers should have taken jobs from the queue"

    # The outputs are tables on S3 and a registered checkpoint.
    assert get_model("team-smoke").kind == "trained"
    samples = _plan("team.samples")
    assert samples.total == 2 and all(f.path.startswith(st.warehouse) for f in samples.files)
    report = page("team.sft__validation", limit=10)
    assert report.total == 1 and "r8" in json.dumps(report.rows[0], default=str), report.rows
    comparison = load_comparison("team.cmp")
    assert len(comparison.models) == 2 and len(comparison.items) == 2

    # Votes: the operator (reviewer and above) votes; the viewer is refused.
    op, viewer = resolve(OPERATOR, "config"), resolve(VIEWER, "config")
    assert isinstance(op, User) and op.role == "operator" and viewer.role == "viewer"
    item = comparison.items[0]
    with pytest.raises(PermissionDenied):
        cast_vote(comparison, blind_pair(comparison, item, viewer.name), "A", viewer)
    cast_vote(comparison, blind_pair(comparison, item, op.name), "tie", op)
    votes = list_votes("team.cmp")
    assert [v["voter"] for v in votes] == [OPERATOR]
