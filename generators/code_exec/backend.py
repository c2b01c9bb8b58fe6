"""Which sandbox backend a code-exec job runs code in (the job's `backend`, else the
`sandbox_backend` setting), and the line its log and summary say it with: a build that
never said which one ran left a reviewer to guess how contained its code was."""

from __future__ import annotations

WHAT = {
    "local": "bubblewrap sandboxes on this machine: namespaces, seccomp, rlimits, no network",
    "docker": "containers through the Docker Engine API: no network, read-only root, limits",
}


def chosen_backend(named: str | None) -> str:
    """The backend a job named, else the `sandbox_backend` setting."""
    if named:
        return named
    from podium.config import get_settings

    return get_settings().sandbox_backend


def backend_line(backend: str, named: bool) -> str:
    """'sandbox backend: local (bubblewrap sandboxes ...; the sandbox_backend setting)'."""
    source = "named by the job" if named else "the sandbox_backend setting"
    return f"sandbox backend: {backend} ({WHAT.get(backend, 'a custom backend')}; {source})"
