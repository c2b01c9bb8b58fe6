"""The weight transfer across two Ray nodes: a head in this network namespace (where the
learner runs) and a worker node in a namespace of its own, joined by a veth pair, each
with its own address and its own loopback, as two hosts are. A stand-in replica on the
worker node answers the learner's calls with Podium's real receiver
(`PodiumWeightReceiver.podium_join_group`, what vLLM's worker runs), so the learner's
real `GlooWeightSync.connect` builds the transfer group across the nodes and a tensor
goes through it. Then a whole async GRPO job runs with its real vLLM replica on the
worker node. Root only (namespaces); nothing leaves the machine."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil
import pytest
from click.testing import CliRunner
from conftest import AGENT_PORT_FLAGS, MARKER, STOP_GRACE_S, cluster_processes, free_port
from veth_pair import veth_pair

from podium import processes

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("ip") is None,
        reason="two Ray nodes on one machine need network namespaces: root and `ip`",
    ),
]

CONNECT_TIMEOUT_S = 60  # a rendezvous on the wrong address fails in this, not in 900 s
NODES_TIMEOUT_S = 120.0  # both nodes up, on a busy 2-core host


class StandInReplica:
    """A replica's control surface without vLLM: POST /collective_rpc runs Podium's real
    receiver methods (the ones vLLM's worker runs), on this node's Ray address."""

    def __init__(self) -> None:
        import ray
        import torch

        from trainers.weight_sync.vllm_extension import PodiumWeightReceiver

        class Receiver(PodiumWeightReceiver):
            def recv_tensor(self, numel_json: str) -> dict[str, Any]:
                tensor = torch.zeros(int(json.loads(numel_json)))
                self._podium_group.recv([tensor], 0, 99).wait()
                return {"values": tensor.tolist()}

        receiver = Receiver()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    result = getattr(receiver, body["method"])(*body["args"])
                except Exception as exc:  # noqa: BLE001 - answered, as vLLM's rpc does
                    result = {"error": f"{type(exc).__name__}: {exc}"}
                answer = json.dumps({"results": [result]}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer((ray.util.get_node_ip_address(), 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"


def _ray_start(args: list[str], temp_dir: Path, netns: str | None = None) -> Any:
    venv_bin = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": f"{venv_bin}:{os.environ.get('PATH', '')}",
        "RAY_USAGE_STATS_ENABLED": "0",
        MARKER: str(temp_dir),
    }
    prefix = ["ip", "netns", "exec", netns] if netns else []
    log = (temp_dir / "node.log").open("ab")
    cmd = [*prefix, f"{venv_bin}/ray", "start", "--block", f"--temp-dir={temp_dir}", *args]
    return processes.spawn(cmd, env=env, stdout=log)


@pytest.fixture
def two_nodes(request: pytest.FixtureRequest) -> Iterator[tuple[Any, str, str]]:
    """(ray joined from the head's namespace, head address, worker address). The worker
    declares `request.param` fake GPUs (parametrize indirectly; none by default)."""
    with running_nodes(int(getattr(request, "param", 0))) as nodes:
        yield nodes


@pytest.fixture(scope="class")
def shared_nodes() -> Iterator[tuple[Any, str, str]]:
    """Two nodes for the tests of one class, which only use them (a pair's start and
    stop took ~30 s at load); stopped before the next test outside the class starts its
    own."""
    with running_nodes(0) as nodes:
        yield nodes


def _stop_nodes(nodes: list[Any], temps: list[Path]) -> None:
    import ray

    ray.shutdown()
    for node in reversed(nodes):
        processes.stop(node, grace_s=STOP_GRACE_S)
    for temp in temps:
        for proc in cluster_processes(temp):
            processes.kill(proc.pid)
        shutil.rmtree(temp, ignore_errors=True)


@contextlib.contextmanager
def running_nodes(worker_gpus: int) -> Iterator[tuple[Any, str, str]]:
    """Start the head in this namespace and a worker node with `worker_gpus` fake GPUs in
    one of its own; stop both and remove the namespace at the end."""
    import ray

    nodes: list[Any] = []
    with contextlib.ExitStack() as stack:
        pair = stack.enter_context(veth_pair(os.getpid()))
        head_ip, worker_ip = pair.head_ip, pair.worker_ip
        temps = [Path(tempfile.mkdtemp(prefix="podray-", dir="/tmp")) for _ in range(2)]
        stack.callback(_stop_nodes, nodes, temps)
        gcs = free_port()
        head_args = [
            "--head",
            f"--node-ip-address={head_ip}",
            f"--port={gcs}",
            "--num-cpus=0",  # the learner's node: replicas go to the other one
            "--include-dashboard=false",
            *(f"--{flag}={free_port()}" for flag in AGENT_PORT_FLAGS),
        ]
        nodes.append(_ray_start(head_args, temps[0]))
        worker_args = [f"--address={head_ip}:{gcs}", f"--node-ip-address={worker_ip}"]
        worker_args += ["--num-cpus=2", *([f"--num-gpus={worker_gpus}"] if worker_gpus else [])]
        nodes.append(_ray_start(worker_args, temps[1], netns=pair.netns))
        deadline = time.monotonic() + NODES_TIMEOUT_S
        while True:
            try:
                ray.init(
                    address=f"{head_ip}:{gcs}",
                    _node_ip_address=head_ip,
                    logging_level=logging.WARNING,
                )
                break
            except Exception:  # noqa: BLE001 - the head is still starting
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        while sum(n["Alive"] for n in ray.nodes()) < 2:
            assert time.monotonic() < deadline, (temps[1] / "node.log").read_text()[-3000:]
            time.sleep(1)
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        yield ray, head_ip, worker_ip


class TestOnePairOfNodes:
    """Tests that share one pair of nodes (no fake GPUs)."""

    def test_a_replica_on_another_node_joins_the_learners_transfer_group(
        self, shared_nodes: tuple[Any, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import torch

        from trainers.weight_sync import ReplicaEndpoint, gloo, make_weight_sync
        from trainers.weight_sync.replica_calls import rpc

        ray, head_ip, worker_ip = shared_nodes
        monkeypatch.setattr(gloo, "GROUP_TIMEOUT_S", CONNECT_TIMEOUT_S)
        replica = ray.remote(num_cpus=1)(StandInReplica).remote()
        url = ray.get(replica.url.remote(), timeout=60)
        assert url.startswith(f"http://{worker_ip}:")  # the stand-in is on the other node

        sync = make_weight_sync("gloo", work_dir=tmp_path)  # the learner, on the head's node
        endpoint = ReplicaEndpoint(0, url)
        try:
            sync.connect([endpoint])  # the replica joins at the advertised address; a probe
            assert sync.address is not None and sync.address[0] == head_ip
            sent = torch.arange(4, dtype=torch.float32)
            got: list[Any] = []
            receiving = threading.Thread(target=lambda: got.append(rpc(endpoint, "recv_tensor", 4)))
            receiving.start()
            sync._groups[0].send([sent], 1, 99).wait()  # type: ignore[attr-defined]
            receiving.join(CONNECT_TIMEOUT_S)
            assert got == [{"values": [0.0, 1.0, 2.0, 3.0]}]
        finally:
            sync.close()
            ray.kill(replica)

    @pytest.mark.vllm
    @pytest.mark.train
    def test_an_async_job_trains_with_its_replica_on_the_other_node(
        self, shared_nodes: tuple[Any, str, str], tiny_base: str, make_table: Any, memo_pairs: Any
    ) -> None:
        """The learner runs here (the head's node has no CPUs for actors), the replica, a real
        vLLM server, on the worker node: every push crosses the veth pair and is verified,
        and the job names where its replica ran."""
        from podium.cli import app
        from podium.jobs.launch import run_or_write_card
        from trainers.config import GrpoConfig, RewardSpec

        ray, head_ip, worker_ip = shared_nodes
        steps = 3
        cfg = GrpoConfig.model_validate(
            {
                "model": tiny_base,
                "table": {"name": make_table("demo.memo", memo_pairs)},
                "out": "tiny-two-nodes",
                "rollout": "async",
                "replicas": 1,
                "max_staleness": 1,
                "weight_sync": "gloo",
                "max_steps": steps,
                "batch_size": 4,
                "num_generations": 4,
                "max_completion_length": 8,
                "rewards": [RewardSpec(rule="length:12")],
            }
        )
        job = run_or_write_card("grpo", cfg, foreground=True)
        assert isinstance(job, dict)
        shown = CliRunner().invoke(app, ["jobs", "show", job["id"], "--json"])
        assert shown.exit_code == 0, shown.output
        summary = json.loads(shown.stdout)["outputs"]["summary"]
        assert [n["node"] for n in summary["replica_nodes"]] == [worker_ip]
        assert summary["replica_nodes"][0]["url"].startswith(f"http://{worker_ip}:")
        pushes = [s for s in summary["syncs"] if "joined" not in s]
        assert [s["version"] for s in pushes] == list(range(1, steps))
        assert all(v["match"] and v["resumed"] for s in pushes for v in s["replicas"])
        assert summary["sync_failures"] == [] and summary["samples"] == steps * 4


RUN_AFTER_LOSS_S = 300  # the done-when bound: a replacement and a finished job, or a clear failure


def _raylet_of(node_ip: str) -> psutil.Process:
    (raylet,) = [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"]
        and p.info["cmdline"][0].endswith("raylet")
        and f"--node_ip_address={node_ip}" in p.info["cmdline"]
    ]
    return raylet


def _still_running(job: threading.Thread, log: Path) -> str:
    """Why a job outlived its node, for CI's report: where its thread waits, its log."""
    frame = sys._current_frames().get(job.ident or 0)
    stack = "".join(traceback.format_stack(frame)[-12:]) if frame else "(no frame)"
    tail = log.read_text(errors="replace")[-3000:] if log.is_file() else "(no log)"
    return (
        f"the job still runs {RUN_AFTER_LOSS_S} s after its node died\n"
        f"its thread waits in:\n{stack}\nits log ends:\n{tail}"
    )


@pytest.mark.vllm
@pytest.mark.train
@pytest.mark.parametrize("two_nodes", [2], indirect=True)
def test_a_headless_heads_job_runs_on_the_workers_gpus_and_ends_when_that_node_dies(
    two_nodes: tuple[Any, str, str], tiny_base: str, make_table: Any, memo_pairs: Any
) -> None:
    """Issue 49's done-when: the head has no CPUs and no GPUs, the worker two fake GPUs.
    The learner (an actor) and the replica run on the worker, each with a GPU of its own;
    the worker's raylet killed mid-run takes both with it, and the job ends within 5
    minutes with a line saying the learner was lost, never a hang. Before, the learner
    trained in the job's process on the head, and the worker's loss waited for ever.

    The failed job's record says where each ran (before, only its log did) and keeps the
    last checkpoint saved, marked partial (before, a failed run deleted it)."""
    from podium.cli import app
    from podium.jobs.launch import run_or_write_card
    from podium.jobs.queue import list_jobs
    from podium.models.registry import get_model_or_none, list_models
    from trainers.config import GrpoConfig, RewardSpec

    _, _, worker_ip = two_nodes
    cfg = GrpoConfig.model_validate(
        {
            "model": tiny_base,
            "table": {"name": make_table("demo.memo", memo_pairs)},
            "out": "tiny-node-lost",
            "device": "auto",  # the cluster's (fake) GPUs: the preset's cpu would refuse them
            "rollout": "async",
            "replicas": 1,
            "max_staleness": 1,
            "weight_sync": "gloo",
            "max_steps": 500,  # still running when the node goes
            "save_every": 1,  # a checkpoint to keep when the learner is lost
            "batch_size": 4,
            "num_generations": 4,
            "max_completion_length": 8,
            "rewards": [RewardSpec(rule="length:12")],
        }
    )
    outcome: list[BaseException | Any] = []

    def run() -> None:
        try:
            outcome.append(run_or_write_card("grpo", cfg, foreground=True))
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome.append(exc)

    job = threading.Thread(target=run, daemon=True)
    job.start()
    deadline = time.monotonic() + 900  # a busy 2-core machine: vLLM start and a first step
    while not [m for m in list_models() if m.kind == "trained"]:  # a step saved
        assert job.is_alive(), outcome
        assert time.monotonic() < deadline, "no step saved within 900 s"
        time.sleep(1)
    (record,) = list_jobs()

    _raylet_of(worker_ip).kill()
    job.join(RUN_AFTER_LOSS_S)
    assert not job.is_alive(), _still_running(job, Path(record["log_path"]))
    shown = CliRunner().invoke(app, ["jobs", "show", record["id"], "--json"])
    assert shown.exit_code == 0, shown.output
    done = json.loads(shown.stdout)
    assert done["status"] == "failed", done
    reason = str(done["error"]).splitlines()[0]  # the record adds the log's tail below
    lost = f"LearnerLost: the learner was lost with its actor on node {worker_ip} "
    assert reason.startswith(lost), reason
    # Where each ran, from the failed job's record: the worker, each its own fake GPU.
    summary = done["outputs"]["summary"]
    (learner,) = summary["learner_nodes"]
    (replica,) = summary["replica_nodes"]
    assert learner["node"] == replica["node"] == worker_ip, summary
    assert replica["url"].startswith(f"http://{worker_ip}:"), replica
    assert {learner["cuda_visible_devices"], replica["cuda_visible_devices"]} == {"0", "1"}
    # The checkpoints saved are kept, registered marked partial, and named; no final.
    saved = done["outputs"]["checkpoints"]
    assert saved == [f"tiny-node-lost-step-{k}" for k in range(1, len(saved) + 1)], saved
    model = get_model_or_none(saved[-1])
    assert model is not None and model.step == len(saved) and model.lineage["final"] is False
    assert Path(model.path or "", "config.json").is_file()
    assert summary["partial"] == model.partial
    assert (model.partial or "").startswith("failed at step ")
    assert get_model_or_none("tiny-node-lost") is None
