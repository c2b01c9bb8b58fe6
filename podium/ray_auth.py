"""Ray's token authentication, on Podium's terms: the user's Ray configuration stays theirs.

Ray 2.60 turns token authentication on for every new local `ray.init()` whose
RAY_AUTH_MODE is unset, and writes the token it makes to `~/.ray/auth_token`; from then
on every `ray start --head` on that machine finds the file and requires the token, and a
client without it fails ("Authentication token is missing or incorrect"). So:

- A job's private Ray (`private_ray_auth`) runs with a token of its own in a temporary
  directory that is removed with it: nothing lands in ~/.ray, the environment is put back.
- A cluster with token authentication is reached through one setting,
  `ray_auth_token_path` (the file holding the cluster's token, read on this machine only):
  the Jobs API client sends it as a header (`auth_headers`), and a process joining the
  cluster (`ray.init`, for replicas and the learner) loads it (`use_cluster_token`). It
  never goes into a job's runtime environment: Ray shows that in its dashboard, and the
  job's node has the cluster's own token already (Ray's workers inherit it).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from podium.config import Settings, get_settings
from podium.errors import InvalidInput

MODE = "RAY_AUTH_MODE"
TOKEN = "RAY_AUTH_TOKEN"
TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"
_VARIABLES = (MODE, TOKEN, TOKEN_PATH)
SETTING_HINT = (
    "set ray_auth_token_path in podium.toml (or PODIUM_RAY_AUTH_TOKEN_PATH) to a file "
    "holding the cluster's token (`ray get-auth-token` on the head prints it)"
)


def _refresh_ray() -> None:
    """Make this process's Ray see the variables just changed: its config (the auth mode)
    and its token are read once and cached (Ray's own `_enable_token_auth` does this)."""
    try:
        from ray._raylet import (  # type: ignore[attr-defined]  # compiled, no stubs
            AuthenticationTokenLoader,
            Config,
        )
    except ImportError:  # no Ray, or one without token authentication: nothing cached
        return
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _set_variables(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _refresh_ray()


@contextmanager
def private_ray_auth() -> Iterator[Path]:
    """Around a private local `ray.init()`: token authentication with a fresh token in a
    private temporary file (the cluster's processes inherit the variables), instead of
    the ~/.ray/auth_token Ray would write for good; afterwards the file is gone and
    RAY_AUTH_* are as they were. Yields the token file."""
    before = {name: os.environ.get(name) for name in _VARIABLES}
    folder = Path(tempfile.mkdtemp(prefix="podium-ray-auth-"))  # mode 0700
    token_file = folder / "auth_token"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32))
    try:
        _set_variables({MODE: "token", TOKEN: None, TOKEN_PATH: str(token_file)})
        yield token_file
    finally:
        _set_variables(before)
        shutil.rmtree(folder, ignore_errors=True)


def cluster_token_file(settings: Settings | None = None) -> Path | None:
    """The configured token file (`ray_auth_token_path`), checked; None when unset."""
    settings = settings or get_settings()
    if not settings.ray_auth_token_path:
        return None
    path = Path(settings.ray_auth_token_path).expanduser()
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise InvalidInput(
            f"ray_auth_token_path is {path}, which cannot be read ({exc.strerror}): point it "
            "at the file holding the Ray cluster's token."
        ) from None
    if not token:
        raise InvalidInput(f"ray_auth_token_path is {path}, which is empty: {SETTING_HINT}.")
    return path


def auth_headers(settings: Settings | None = None) -> dict[str, str]:
    """The Jobs API header carrying the configured token ({} when none is configured)."""
    path = cluster_token_file(settings)
    if path is None:
        return {}
    return {"Authorization": "Bearer " + path.read_text(encoding="utf-8").strip()}


def use_cluster_token(settings: Settings | None = None) -> None:
    """Before joining a cluster with `ray.init`: load the configured token, if any.

    Inside a Ray job on a token-authenticated cluster the process already has the
    cluster's own token (Ray sets RAY_AUTH_MODE=token for its workers); a configured path
    that does not exist on that node is then not an error."""
    settings = settings or get_settings()
    if not settings.ray_auth_token_path:
        return
    if os.environ.get(MODE) == "token" and not Path(settings.ray_auth_token_path).exists():
        return
    path = cluster_token_file(settings)
    _set_variables({MODE: "token", TOKEN: None, TOKEN_PATH: str(path)})


def is_auth_failure(exc: BaseException) -> bool:
    """Whether a Ray error is a refused token (Ray's AuthenticationError, or an HTTP 401
    or 403 the Jobs API wrapped in a RuntimeError)."""
    try:
        from ray.exceptions import AuthenticationError
    except ImportError:  # pragma: no cover - Ray without token authentication
        return False
    if isinstance(exc, AuthenticationError):
        return True
    text = str(exc)
    return "token authentication" in text.lower() or "Unauthorized" in text


def auth_refused(where: str, exc: BaseException, settings: Settings | None = None) -> InvalidInput:
    """The error for a cluster that refused Podium's token (or its lack of one)."""
    settings = settings or get_settings()
    said = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    if settings.ray_auth_token_path:
        return InvalidInput(
            f"The Ray cluster at {where} refused the token in ray_auth_token_path "
            f"({settings.ray_auth_token_path}): it is not this cluster's token; "
            f"{SETTING_HINT}. (Ray: {said})"
        )
    return InvalidInput(
        f"The Ray cluster at {where} uses token authentication and Podium has no token "
        f"for it: {SETTING_HINT}. (Ray: {said})"
    )
