"""Weights through vLLM's own CUDA IPC engine, for a learner on the same GPU as its
replicas (colocated: the one-GPU case).

The replica is started with `--weight-transfer-config '{"backend": "ipc"}'` (and
VLLM_ALLOW_INSECURE_SERIALIZATION=1, since the handles cross HTTP pickled; see
`replica.server_args`). A push, per replica, at a safe point (base.swap_at_safe_point):
the learner exports a CUDA IPC handle of each of its snapshot's tensors
(`torch.multiprocessing.reductions.reduce_tensor`, the call vLLM's trainer-side
IPCTrainerWeightTransferEngine makes, keyed by the GPU's UUID), and drives vLLM's
routes `/start_weight_update`, `/update_weights` (the handles, pickled as vLLM's
HTTPVLLMWeightSyncClient sends them) and `/finish_weight_update`: vLLM's
IPCWeightTransferEngine maps the learner's memory and loads it; nothing is copied
through the host. Then the worker extension hashes the tensors behind the same handles
and compares vLLM's fingerprint of the engine's parameters with the one before
(`podium_note_ipc_load`), and the push is verified as every backend's is.

The learner side needs only torch (Podium's environment has no vLLM). The pickled
handles are accepted only from a loopback replica: a colocated one is on this host, and
its unpickling must not face a network.

UNTESTED on Podium's CPU machine (CUDA IPC needs a GPU); tests/gpu runs it.
"""

from __future__ import annotations

import base64
import ipaddress
import pickle
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import torch

from trainers.weight_sync.base import SyncRecord, WeightSync, timed
from trainers.weight_sync.plan import TransferPlan
from trainers.weight_sync.replica_calls import (
    CALL_TIMEOUT_S,
    ReplicaEndpoint,
    WeightSyncError,
    load_problem,
    rpc,
    swap_at_safe_point,
    verify,
)

WEIGHT_TRANSFER_CONFIG = '{"backend": "ipc"}'  # the replica's --weight-transfer-config


def gpu_uuid(device: torch.device | str) -> str:
    return str(torch.cuda.get_device_properties(torch.device(device)).uuid)


def colocated(learner_device: torch.device | str, replica_uuids: Sequence[str | None]) -> bool:
    """Whether every replica's engine runs on the learner's own GPU (its UUID, as each
    replica's worker reports it): the case for CUDA IPC."""
    device = torch.device(learner_device)
    if device.type != "cuda" or not replica_uuids:
        return False
    own = gpu_uuid(device)
    return all(uuid == own for uuid in replica_uuids)


def transfer_backend(
    requested: str, learner_device: torch.device | str, replica_uuids: Sequence[str | None]
) -> str:
    """The backend a push takes: CUDA IPC where the learner shares its GPU with every
    replica and a GPU path (nccl) was asked for, else `requested`."""
    if requested in ("nccl", "ipc") and colocated(learner_device, replica_uuids):
        return "ipc"
    if requested == "ipc":
        raise WeightSyncError(
            "weight_sync ipc needs the learner on the same GPU as every replica; use "
            "nccl (replicas on other GPUs) or gloo (CPU)"
        )
    return requested


def backend_for(
    requested: str, learner_device: torch.device | str, replicas: Sequence[ReplicaEndpoint]
) -> str:
    """`transfer_backend` with each replica's GPU as its worker reports it (asked only
    where a GPU path is requested: gloo and disk stay what they are)."""
    wanted = requested in ("nccl", "ipc")
    uuids = [rpc(r, "podium_device_uuid") for r in replicas] if wanted else []
    return transfer_backend(requested, learner_device, uuids)


def _loopback(replica: ReplicaEndpoint) -> bool:
    host = urlsplit(replica.root).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class IpcWeightSync(WeightSync):
    backend = "ipc"
    device = "cuda"

    def connect(self, replicas: Sequence[ReplicaEndpoint]) -> None:
        if self.learner_ranks != 1:
            raise WeightSyncError("weight_sync ipc pushes from one learner rank; use nccl")
        for replica in replicas:
            if not _loopback(replica):
                raise WeightSyncError(
                    f"replica {replica.index} ({replica.root}) is not on this host's "
                    "loopback: CUDA IPC serves a colocated replica only (its pickled "
                    "handles must not cross a network); use nccl"
                )
            _post(replica, "/init_weight_transfer_engine", {"init_info": {"packed": False}})
            self.replicas[replica.index] = replica

    def _push_to(
        self,
        targets: Sequence[ReplicaEndpoint],
        plan: TransferPlan,
        tensors: list[tuple[str, torch.Tensor]],
        version: int,
    ) -> SyncRecord:
        record = self._record(version, plan, targets)
        expected = timed(record.phases, "digests_s", self.expected_checksum, plan, tensors)
        # Held until every replica has loaded and hashed: a handle does not keep its
        # memory alive, these tensors do.
        names = [name for name, _ in tensors]
        pickled = base64.b64encode(pickle.dumps(self._handles(tensors))).decode()
        update = {
            "names": names,
            "dtype_names": [str(t.dtype).removeprefix("torch.") for _, t in tensors],
            "shapes": [list(t.shape) for _, t in tensors],
            "ipc_handles_pickled": pickled,
        }
        results = []
        for replica in targets:  # one GPU: the loads take turns on it anyway

            def load(replica: ReplicaEndpoint = replica) -> dict[str, Any]:
                rpc(replica, "podium_engine_fingerprint")
                _post(replica, "/start_weight_update", None)
                _post(replica, "/update_weights", {"update_info": update})
                # The engine's own version too (vLLM's /weight_info).
                _post(replica, "/finish_weight_update", {"weight_version": str(version)})
                spec = {"version": version, "names": names, "handles": pickled}
                got: dict[str, Any] = rpc(replica, "podium_note_ipc_load", spec)
                return got

            def problem(got: dict[str, Any]) -> str | None:
                return load_problem(version, expected, got)

            results.append((replica, swap_at_safe_point(replica, load, problem)))
        torch.cuda.ipc_collect()  # type: ignore[no-untyped-call]
        record.replicas = verify(version, expected, results)
        return record

    @staticmethod
    def _handles(tensors: list[tuple[str, torch.Tensor]]) -> list[dict[str, Any]]:
        from torch.multiprocessing.reductions import reduce_tensor

        handles = []
        for _, tensor in tensors:
            _, args = reduce_tensor(tensor)  # type: ignore[no-untyped-call]
            handles.append({gpu_uuid(tensor.device): args})
        return handles


def _post(replica: ReplicaEndpoint, path: str, body: dict[str, Any] | None) -> None:
    """One of vLLM's weight-transfer routes (vllm/entrypoints/rl/online/api_router.py)."""
    try:
        resp = httpx.post(replica.root + path, json=body, timeout=CALL_TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise WeightSyncError(f"replica {replica.index} ({replica.root}): {path}: {exc}") from exc
    if resp.status_code != 200:
        raise WeightSyncError(
            f"replica {replica.index} ({replica.root}): {path} answered {resp.status_code}: "
            f"{resp.text[:500]}. Was it started with --weight-transfer-config "
            f"'{WEIGHT_TRANSFER_CONFIG}' and VLLM_ALLOW_INSECURE_SERIALIZATION=1?"
        )
