"""The replica side of Podium's weight transfer: loaded INSIDE each vLLM server.

The server is started with `--worker-extension-cls vllm_extension.PodiumWeightReceiver`
and PYTHONPATH set to this directory only (vLLM's interpreter cannot import Podium), so
this module imports nothing but the standard library and torch. vLLM mixes the class
into its Worker: `self` is the worker. The learner calls the methods through the dev-mode
endpoint `POST /collective_rpc {"method": ..., "args": [json]}` (arguments arrive as
strings, hence JSON), between pausing and resuming the server (see `gloo.py`).

What both sides must compute identically exists once: the checksum and the rows each
learner rank sends live in `checksum.py` (imported here as the top-level `checksum`
inside vLLM, whose PYTHONPATH is this directory), `parse_dtype` and `build_group` here,
and `refresh_tied_head`, which the colocated sync (trainers/vllm_sync.py) runs as well.

Loading goes through the worker's `reload_weights(weights_iterator=...)`: the in-place
layerwise reload that restores the checkpoint layout, loads and re-processes (the CPU
build repacks linear layers; see trainers/vllm_sync.py). After a load whose checksum
differs from the previous one, vLLM's own fingerprint of the engine's parameters
(`compute_weight_checksums`) must change too: a sync that "succeeds" but moves nothing
(vLLM issue 57022) is reported as `moved: false` and the learner fails the push.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import socket
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch

if __package__:  # trainers.weight_sync.vllm_extension: the learner's side and the tests
    from trainers.weight_sync.checksum import ChecksumStream, row_slices
else:  # the module vLLM loads: PYTHONPATH is this directory alone, Podium is not there
    from checksum import ChecksumStream, row_slices  # type: ignore[import-not-found,no-redef]


def parse_dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name.removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return dtype


def build_group(spec: dict[str, Any], is_master: bool) -> Any:
    """A process group of its own over a TCPStore, without touching torch.distributed's
    default group (vLLM's worker already owns that one)."""
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=float(spec.get("timeout_s", 600)))
    store = dist.TCPStore(
        spec["host"],
        int(spec["port"]),
        is_master=is_master,
        timeout=timeout,
        wait_for_workers=False,
    )
    prefixed = dist.PrefixStore(str(spec["group"]) + "/", store)
    rank, world = int(spec["rank"]), int(spec["world"])
    if spec.get("backend", "gloo") == "nccl":
        return dist.ProcessGroupNCCL(prefixed, rank, world, dist.ProcessGroupNCCL.Options())
    # Gloo's default device advertises whatever this host's name resolves to, which a
    # peer on another node may not reach (another network, or loopback): advertise the
    # address on the route to the store's host, which the peers reach too.
    options = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]
    options._devices = [
        dist.ProcessGroupGloo.create_device(hostname=address_towards(spec["host"], spec["port"]))
    ]
    options._timeout = timeout
    return dist.ProcessGroupGloo(prefixed, rank, world, options)


def address_towards(host: str, port: int) -> str:
    """This host's own address on the route to (host, port): what a peer there can reach
    it at (no packet is sent: a UDP connect only picks the route)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect((host, int(port)))
        own: str = probe.getsockname()[0]
    return own


def _fingerprint(worker: Any) -> str:
    """vLLM's own digest of the engine's parameters, folded into one value."""
    digests = worker.compute_weight_checksums()
    return hashlib.sha256(json.dumps(sorted(digests.items())).encode()).hexdigest()


def refresh_tied_head(worker: Any) -> None:
    """Re-tie and re-process an output head that shares the input embedding.

    vLLM 0.32's in-place reload loads `embed_tokens` but never `lm_head` when they are
    tied (the checkpoint has no lm_head), and on CPU the head computes with a packed copy
    of its weight made when it was processed (`cpu_linear`), so after a reload it kept
    producing logits from the OLD embedding: checksums matched, greedy outputs did not.
    """
    runner = worker.model_runner
    config = runner.model_config.hf_config
    tied = getattr(config, "tie_word_embeddings", False) or getattr(
        getattr(config, "text_config", None), "tie_word_embeddings", False
    )
    model = runner.get_model()
    head = getattr(model, "lm_head", None)
    embed = getattr(getattr(model, "model", None), "embed_tokens", None)
    if not tied or head is None or embed is None:
        return
    if head.weight is not embed.weight:
        head.weight = embed.weight
    method = getattr(head, "quant_method", None)
    if method is not None:
        method.process_weights_after_loading(head)


class PodiumWeightReceiver:
    """Methods mixed into vLLM's Worker (`self` is the worker)."""

    _podium_group: Any = None
    _podium_group_spec: dict[str, Any] | None = None
    # The learner's broadcast group with every replica of the run as it stands (gloo.py);
    # a newer one replaces it when a replica is replaced or added.
    _podium_members: Any = None
    _podium_members_name: str | None = None
    _podium_version: int = 0
    _podium_checksum: str | None = None
    _podium_fingerprint: str | None = None

    def podium_join_group(self, spec_json: str) -> dict[str, Any]:
        """Join the transfer group {host, port, group, rank, world, learner_ranks,
        backend}; receive one small tensor from each learner rank to warm the links."""
        spec = json.loads(spec_json)
        group = build_group(spec, is_master=False)
        device = "cuda" if spec.get("backend") == "nccl" else "cpu"
        if spec.get("members"):  # the broadcast group: one warm-up broadcast from rank 0
            group.broadcast(torch.zeros(1, device=device), 0).wait()
            self._podium_members, self._podium_members_name = group, spec["group"]
            return {"joined": spec["group"], "rank": spec["rank"]}
        for src in range(int(spec["learner_ranks"])):
            probe = torch.zeros(1, device=device)
            group.recv([probe], src, 0).wait()
        self._podium_group, self._podium_group_spec = group, spec
        return {"joined": spec["group"], "rank": spec["rank"]}

    def podium_receive_weights(self, meta_json: str) -> dict[str, Any]:
        """Receive every tensor (each learner rank sends its rows, see `row_slices`),
        verify, load, and report {version, checksum, moved, seconds}.
        meta: {version, learner_ranks, tensors: [[name, shape, dtype]], corrupt}"""
        if self._podium_group is None:
            return {"error": "this replica has not joined a transfer group"}
        meta = json.loads(meta_json)
        ranks = int(meta["learner_ranks"])
        device = "cuda" if (self._podium_group_spec or {}).get("backend") == "nccl" else "cpu"
        started = time.perf_counter()
        group = self._podium_group
        members = meta.get("members")  # one broadcast a tensor from learner rank 0
        if members is not None and members != self._podium_members_name:
            return {"error": f"this replica is not in broadcast group {members}"}

        def arriving() -> Iterator[tuple[str, torch.Tensor]]:
            # Every receive is posted first; each tensor is handed to the engine as soon
            # as its rows are in, so the transfer overlaps the engine's reload.
            posted = []
            for index, (name, shape, dtype) in enumerate(meta["tensors"]):
                buffer = torch.empty(shape, dtype=parse_dtype(dtype), device=device)
                rows = buffer.view(1) if not shape else buffer
                if members is not None:
                    work = self._podium_members.broadcast(buffer.view(-1), 0)
                    posted.append((name, buffer, [work]))
                    continue
                works = [
                    group.recv([rows[start:stop]], src, index + 1)
                    for src, (start, stop) in enumerate(row_slices(shape, ranks))
                    if stop > start
                ]
                posted.append((name, buffer, works))
            for name, buffer, works in posted:
                for work in works:
                    work.wait()
                yield name, buffer

        return self._podium_load(
            arriving(), int(meta["version"]), bool(meta.get("corrupt")), started, ranks
        )

    def podium_load_file(self, spec_json: str) -> dict[str, Any]:
        """Load the safetensors file(s) the learner ranks wrote (the disk backend): one
        whole file, or one per rank holding its rows, joined here in rank order.
        spec: {paths, version, corrupt, learner_ranks, tensors: [[name, shape, dtype]]}"""
        from safetensors.torch import load_file

        spec = json.loads(spec_json)
        started = time.perf_counter()
        ranks = int(spec.get("learner_ranks", 1))
        files = [load_file(path) for path in spec["paths"]]
        if len(files) == 1:
            tensors = iter(sorted(files[0].items()))
        else:
            tensors = iter(
                (name, torch.cat([f[name] for f in files if name in f]).reshape(shape))
                for name, shape, _ in spec["tensors"]
            )
        return self._podium_load(
            tensors, int(spec["version"]), bool(spec.get("corrupt")), started, ranks
        )

    def podium_device_uuid(self) -> str | None:
        """The UUID of the GPU this worker's engine runs on (None on CPU): a learner on
        the same GPU pushes through CUDA IPC (ipc.py)."""
        device = getattr(self, "device", None)
        if device is None or getattr(device, "type", "cpu") != "cuda":
            return None
        return str(torch.cuda.get_device_properties(device).uuid)

    def podium_engine_fingerprint(self) -> str:
        """vLLM's digest of the engine's parameters now, kept as the one a load that
        follows is compared with (ipc.py: vLLM's own engine does that load)."""
        self._podium_fingerprint = _fingerprint(self)
        return self._podium_fingerprint

    def podium_note_ipc_load(self, spec_json: str) -> dict[str, Any]:
        """After vLLM's IPC engine loaded a push (ipc.py): hash the tensors the learner's
        CUDA IPC handles point at (still alive: the learner holds them until this
        returns), as `_podium_load` hashes what it receives, and compare the engine's
        fingerprint with the one before the load. Reports {version, checksum, moved}.
        spec: {version, handles (base64 pickle, as vLLM's HTTP client sends them),
        names}."""
        import base64
        import pickle

        from torch.multiprocessing.reductions import rebuild_cuda_tensor

        spec = json.loads(spec_json)
        started = time.perf_counter()
        # The learner's own handles, sent to vLLM's /update_weights in the same form;
        # vLLM unpickles them there too (VLLM_ALLOW_INSECURE_SERIALIZATION, loopback only).
        handles = pickle.loads(base64.b64decode(spec["handles"]))
        uuid = self.podium_device_uuid()
        index = self.device.index  # type: ignore[attr-defined]
        stream = ChecksumStream(1)
        for name, handle in sorted(zip(spec["names"], handles, strict=True)):
            args = list(handle[uuid])
            args[6] = index  # the receiver's device index, as vLLM's IPC engine sets it
            stream.update(name, rebuild_cuda_tensor(*args))  # type: ignore[no-untyped-call]
        checksum = stream.hexdigest()
        before = self._podium_fingerprint
        after = _fingerprint(self)
        moved: bool | None = after != before or checksum == self._podium_checksum
        if not moved and self._podium_checksum is None:
            moved = None
        self._podium_fingerprint = after
        self._podium_checksum, self._podium_version = checksum, int(spec["version"])
        return {
            "version": self._podium_version,
            "checksum": checksum,
            "moved": moved,
            "seconds": time.perf_counter() - started,
        }

    def podium_weights_checksum(self) -> dict[str, Any]:
        """The checksum and version of the weights last loaded (None before any load)."""
        return {"version": self._podium_version, "checksum": self._podium_checksum}

    def podium_weight_version(self) -> int:
        return self._podium_version

    def _podium_load(
        self,
        tensors: Iterator[tuple[str, torch.Tensor]],
        version: int,
        corrupt: bool,
        started: float,
        ranks: int = 1,
    ) -> dict[str, Any]:
        stream = ChecksumStream(ranks)
        # Seconds per phase, a diagnostic the learner keeps in its sync record: waiting
        # for tensors to arrive (transfer or file read), hashing them (on the hasher
        # thread, overlapping the reload; hash_wait_s is what the reload then waits), ...
        phases = {"arrive_s": 0.0, "hash_s": 0.0}

        def digest(name: str, tensor: torch.Tensor) -> None:
            tick = time.perf_counter()
            stream.update(name, tensor)
            phases["hash_s"] += time.perf_counter() - tick

        # One hasher thread, so digests go in in name order; the cast and sha256 release
        # the GIL, so hashing a tensor overlaps the engine's reload of the ones before.
        hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="podium-hash")
        hashing: list[Future[None]] = []

        def hashed() -> Iterator[tuple[str, torch.Tensor]]:
            position = 0
            while True:
                tick = time.perf_counter()
                item = next(tensors, None)
                phases["arrive_s"] += time.perf_counter() - tick
                if item is None:
                    return
                name, tensor = item
                if corrupt and position == 0:
                    tensor = tensor + 1.0  # test-only: one tensor spoiled, as in a bad transfer
                position += 1
                # The engine only reads a tensor it is fed, so the hasher may read it too.
                hashing.append(hasher.submit(digest, name, tensor))
                yield name, tensor

        tick = time.perf_counter()
        before = self._podium_fingerprint or _fingerprint(self)
        phases["fingerprint_before_s"] = time.perf_counter() - tick
        phases["open_s"] = tick - started  # files read (disk) or receives posted (gloo)
        feed = hashed()
        tick = time.perf_counter()
        try:
            self.reload_weights(weights_iterator=feed)  # type: ignore[attr-defined]
            for _ in feed:  # whatever the engine did not ask for still counts (and must arrive)
                pass
            phases["reload_s"] = time.perf_counter() - tick  # arrive_s included
            tick = time.perf_counter()
            for future in hashing:
                future.result()
            phases["hash_wait_s"] = time.perf_counter() - tick
        finally:
            hasher.shutdown(wait=True)
        checksum = stream.hexdigest()
        received_s = time.perf_counter() - started
        tick = time.perf_counter()
        refresh_tied_head(self)
        phases["refresh_tied_head_s"] = time.perf_counter() - tick
        tick = time.perf_counter()
        after = _fingerprint(self)
        phases["fingerprint_after_s"] = time.perf_counter() - tick
        # A new checksum must move the engine's parameters; the same one may not. The
        # first load may legitimately equal the checkpoint the server started from, so an
        # unchanged fingerprint there reads "cannot tell" (None), not a failure.
        moved: bool | None = after != before or checksum == self._podium_checksum
        if not moved and self._podium_checksum is None:
            moved = None
        self._podium_fingerprint = after
        self._podium_checksum, self._podium_version = checksum, version
        return {
            "version": version,
            "checksum": checksum,
            "moved": moved,
            "received_s": received_s,  # received, hashed and loaded
            "seconds": time.perf_counter() - started,
            "phases": phases,
        }
