"""A job's private Ray outlives the cancel that stops it: the worker's SIGTERM reaches the
job's whole process group, Ray's GCS included, and Ray ends a process that has lost its
GCS after `gcs_rpc_server_reconnect_timeout_s` (60 s by default). In CI, at load, a
cancelled async GRPO job's cleanup outlasted that and Ray ended it before it recorded its
cancel (test_async_cancel's log ended at "The program will terminate"). Ray applies the
value it started with in every process of that Ray, this job's driver included (checked
by hand: a driver whose GCS was stopped ended after the configured 8 s, not 60)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from podium.jobs.kinds import TRAIN_STOP_GRACE_S

pytestmark = pytest.mark.ray

# In a process of its own: the test's Ray, started and shut down inside pytest's worker,
# would share that process with the Ray tests after it. The private Ray's GCS is the one
# new among the process's children.
PROBE = """
import base64, json, psutil
from podium.reporting import Reporter
from trainers.async_rl.pool import ray_for_job

def gcs_servers():
    return {p for p in psutil.Process().children(recursive=True) if p.name() == "gcs_server"}

before = gcs_servers()
with ray_for_job(1, Reporter()):
    (gcs,) = gcs_servers() - before
    (encoded,) = [a.split("=", 1)[1] for a in gcs.cmdline() if a.startswith("--config_list=")]
print(encoded)
"""


def test_a_private_ray_waits_for_its_gcs_longer_than_a_job_has_to_stop(
    podium_home: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-c", PROBE], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    config = json.loads(base64.b64decode(done.stdout.strip().splitlines()[-1]))
    wait = config.get("gcs_rpc_server_reconnect_timeout_s", 60)
    assert isinstance(wait, int) and wait > TRAIN_STOP_GRACE_S, config
