"""What a sandboxed run may use (`Limits`) and what came out of it (`Result`)."""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["ok", "error", "timeout", "oom", "output_limit", "killed", "sandbox_error"]
STATUSES: tuple[str, ...] = (
    "ok",
    "error",
    "timeout",
    "oom",
    "output_limit",
    "killed",
    "sandbox_error",
)


@dataclass(frozen=True)
class Limits:
    """Per-run limits. Network is always off and the filesystem read-only except /tmp."""

    wall_s: float = 10.0
    cpu_s: float = 10.0
    memory_mb: int = 512
    processes: int = 32
    # Caps stdout, stderr and any single file the code writes.
    output_bytes: int = 1_000_000

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Result:
    status: Status
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    # Signal that ended the process, if any (e.g. 9 for SIGKILL).
    signal: int | None = None
    truncated: bool = False
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("extra")
        return data

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Result:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data and k != "extra"}
        return cls(**known)


# Jobs run as a uid drawn from a range no account uses, one per worker: RLIMIT_NPROC
# counts processes per uid across the whole host, so two pools (this process's and
# another's on the same machine or engine) must never share one.
JOB_UID_BASE = 1_500_000_000
JOB_UID_SPAN = 500_000_000


def job_uid() -> int:
    return JOB_UID_BASE + secrets.randbelow(JOB_UID_SPAN)


def sandbox_error(detail: str, wall_s: float = 0.0) -> Result:
    return Result(status="sandbox_error", detail=detail, wall_s=wall_s)
