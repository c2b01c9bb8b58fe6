"""Whether a job reproduces: the outcome of each `podium jobs rerun ID --compare`, kept
beside the job's log (`$PODIUM_HOME/jobs/<id>/reruns.jsonl`, one line per comparison),
and the one line the Logbook shows for it:

    re-ran identical on 2026-11-26
    re-ran within tolerance on 2026-11-26      (a GPU run: not bitwise reproducible)
    differs: loss curve: from step 2, ... (re-run 2026-11-26)
    not reproducible: no seed                  (a sampling card from before seeds were pinned)
    not checked yet: podium jobs rerun ID --compare
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from podium.errors import PodiumError
from podium.jobs.cards import parse_card, samples_without_seed
from podium.jobs.queue import Job, job_dir, now

RERUNS_FILE = "reruns.jsonl"


def record_rerun(job_id: str, rerun_job_id: str, verdict: str, differences: list[str]) -> None:
    """Append one comparison's outcome to the original job's record."""
    path = job_dir(job_id) / RERUNS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "at": now().isoformat(),
        "rerun_job_id": rerun_job_id,
        "verdict": verdict,
        "differences": differences,
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def reruns(job_id: str) -> list[dict[str, Any]]:
    """Every recorded comparison of the job with a re-run, oldest first."""
    path = job_dir(job_id) / RERUNS_FILE
    if not path.is_file():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by a crash: skip it
            continue
        if isinstance(entry, dict) and "verdict" in entry:
            found.append(entry)
    return found


def _sampled_without_seed(job: Job) -> bool:
    try:
        config = parse_card(job["card"], source=f"card of job {job['id']}").config
    except PodiumError:  # a kind no longer installed: nothing to say about its seed
        return False
    greedy = getattr(config, "temperature", None) == 0
    return samples_without_seed(config) and not greedy


def reproducibility_text(job: Job) -> str:
    """One line on whether `job` re-runs to the same result ('' when nothing applies)."""
    done = reruns(job["id"])
    if done:
        last = done[-1]
        day = datetime.fromisoformat(last["at"]).strftime("%Y-%m-%d")
        if last["verdict"] == "identical":
            return f"re-ran identical on {day}"
        if last["verdict"] == "within tolerance":
            return f"re-ran within tolerance on {day}"
        what = "; ".join(last.get("differences") or []) or "outputs differ"
        return f"differs: {what} (re-run {day})"
    if _sampled_without_seed(job):
        return "not reproducible: no seed"
    outputs = job.get("outputs") or {}
    comparable = outputs.get("tables") or (outputs.get("summary") or {}).get("checkpoint")
    if job["status"] != "succeeded" or not comparable:  # nothing a re-run could compare
        return ""
    return f"not checked yet: podium jobs rerun {job['id']} --compare"
