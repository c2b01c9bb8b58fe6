"""The learner's calls to one replica's server, and the verdict on what it loaded.

Every backend drives a replica alike: a worker-extension method through
`/collective_rpc` (`rpc`), the load between a pause at a safe point and a resume
(`swap_at_safe_point`), and the replica's report checked against the learner's checksum
(`load_problem`, `verify`). A replica whose load is not verified stays paused and is
named in a `ReplicaLoadError` (base.py tells the whole push).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from podium.errors import PodiumError

EXTENSION_CLASS = "vllm_extension.PodiumWeightReceiver"
CALL_TIMEOUT_S = 900.0  # a pause waits for the requests in flight to finish


class WeightSyncError(PodiumError):
    """A push failed or was not verified (names the replica, expected and got)."""


class ReplicaLoadError(WeightSyncError):
    """Replicas that did not load a push as the learner sent it; each was left paused.
    `failed` holds their indices, `verdicts` every replica's verdict (the others loaded
    and were resumed)."""

    def __init__(self, message: str, failed: list[int], verdicts: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.failed = failed
        self.verdicts = verdicts

    def __reduce__(self) -> tuple[Any, ...]:
        # Whole across processes (a learner in a Ray actor raises it to the job's).
        return (type(self), (str(self), self.failed, self.verdicts))


@dataclass(frozen=True)
class ReplicaEndpoint:
    """How the learner reaches one replica: its index and its server's URL (with or
    without the OpenAI `/v1` suffix)."""

    index: int
    base_url: str

    @property
    def root(self) -> str:
        return self.base_url.rstrip("/").removesuffix("/v1")


def rpc(replica: ReplicaEndpoint, method: str, *args: Any) -> Any:
    """Call a worker-extension method on the replica's (single) worker; its result."""
    try:
        resp = httpx.post(
            replica.root + "/collective_rpc",
            json={"method": method, "args": [json.dumps(a) for a in args]},
            timeout=CALL_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise WeightSyncError(
            f"replica {replica.index} ({replica.root}): {method} failed: {exc}"
        ) from exc
    if resp.status_code != 200:
        raise WeightSyncError(
            f"replica {replica.index} ({replica.root}): {method} answered {resp.status_code}: "
            f"{resp.text[:500]}. Is the server started with the worker extension "
            f"({EXTENSION_CLASS}) and VLLM_SERVER_DEV_MODE=1?"
        )
    result = resp.json()["results"][0]
    if isinstance(result, dict) and result.get("error"):
        raise WeightSyncError(f"replica {replica.index}: {method}: {result['error']}")
    return result


def _post(replica: ReplicaEndpoint, path: str) -> None:
    try:
        resp = httpx.post(replica.root + path, timeout=CALL_TIMEOUT_S)
        resp.raise_for_status()
    except httpx.HTTPError as exc:
        raise WeightSyncError(
            f"replica {replica.index} ({replica.root}): {path} failed: {exc}"
        ) from exc


def swap_at_safe_point(
    replica: ReplicaEndpoint,
    load: Callable[[], dict[str, Any]],
    problem: Callable[[dict[str, Any]], str | None],
) -> dict[str, Any]:
    """Pause (in-flight requests finish first), load, clear the prefix cache and resume,
    unless `problem` finds one in what the load reported: then the replica stays paused
    (requests queue; none is served by weights that are not the learner's). A load that
    raises is reported as `error`, and stays paused too. The result's `phases` gains the
    seconds of each call, as the learner saw them; `resumed` says whether it was resumed."""
    ticks = [time.perf_counter()]
    _post(replica, "/pause?mode=wait")
    ticks.append(time.perf_counter())
    try:
        result = load()
    except Exception as exc:  # noqa: BLE001 - reported in the verdict; the push fails
        result = {"error": f"{type(exc).__name__}: {exc}"}
    ticks.append(time.perf_counter())
    result["resumed"] = problem(result) is None
    if result["resumed"]:
        _post(replica, "/reset_prefix_cache")
        ticks.append(time.perf_counter())
        _post(replica, "/resume")
        ticks.append(time.perf_counter())
    names = ("pause_s", "load_call_s", "reset_prefix_cache_s", "resume_s")
    phases = result.setdefault("phases", {})
    phases.update({n: b - a for n, a, b in zip(names, ticks, ticks[1:], strict=False)})
    return result


def weight_version(replica: ReplicaEndpoint) -> int:
    """The version of the weights the replica serves now (0: its checkpoint's)."""
    return int(rpc(replica, "podium_weight_version"))


def load_problem(version: int, expected: str, got: dict[str, Any]) -> str | None:
    """What is wrong with a replica's report of a load of `version`, or None."""
    if got.get("error"):
        return f"the load failed: {got['error']}"
    if got.get("checksum") != expected or int(got.get("version", -1)) != version:
        return (
            f"expected checksum {expected} at version {version}, "
            f"got {got.get('checksum')} at version {got.get('version')}"
        )
    if got.get("moved") is False:
        return (
            "the load reported success but the engine's parameters did not change "
            "(vLLM issue 57022: a sync that moves nothing)"
        )
    return None


def verify(
    version: int, expected: str, results: Sequence[tuple[ReplicaEndpoint, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Per-replica verdicts; raises ReplicaLoadError naming every failed replica."""
    verdicts, failures, failed = [], [], []
    for replica, got in results:
        problem = load_problem(version, expected, got)
        verdicts.append(
            {
                "replica": replica.index,
                "checksum": got.get("checksum"),
                "expected": expected,
                "match": got.get("checksum") == expected and int(got.get("version", -1)) == version,
                "version": got.get("version"),
                "moved": got.get("moved"),
                "error": got.get("error"),
                "resumed": got.get("resumed"),
                "load_seconds": got.get("seconds"),
                "received_s": got.get("received_s"),
                "phases": got.get("phases", {}),
            }
        )
        if problem is not None:
            failures.append(f"replica {replica.index}: {problem} (left paused)")
            failed.append(replica.index)
    if failures:
        raise ReplicaLoadError(
            "weight sync verification failed: " + "; ".join(failures), failed, verdicts
        )
    return verdicts
