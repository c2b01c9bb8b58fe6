"""Joining the Ray cluster a job fans its work out over, from any process (a job's, a
replica's, the learner's), without losing the job's own SIGTERM handler to Ray's.

    ray = ray_module()         # joined to the Ray cluster, once per process
    with sigterm_kept():       # around a ray.init() of one's own
        ray.init(...)
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def sigterm_kept() -> Iterator[None]:
    """Around `ray.init()` in a job's process: on the main thread Ray sets its own SIGTERM
    handler (`sys.exit(15)`) over the job's, which records a cancel or a requeue
    (podium.jobs.execute); a cancelled job then read as failed. The job's is put back."""
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, before)


def ray_module() -> Any:
    """`ray`, joined to the cluster a job fans its work out over (once per process).

    A job launched with `launcher: ray` runs as a Ray job, where `ray.init()` joins the
    cluster it runs on ($RAY_ADDRESS is set by Ray). Elsewhere it joins a running local
    cluster (`ray start --head`), and says how to get one if there is none. Imported
    lazily: Ray is an extra. It lives at the bottom layer because generation, code-exec
    builds and validation all fan out over it.
    """
    import logging

    from podium.errors import InvalidInput

    try:
        import ray
    except ImportError:
        raise InvalidInput(
            "Spreading a job over a cluster needs Ray: pip install 'podium[cluster]'."
        ) from None
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS", "")
        if "://" in address and not address.startswith("ray://"):
            address = ""  # a job server (dashboard) URL is not what ray.init joins
        from podium.ray_auth import SETTING_HINT, auth_refused, is_auth_failure, use_cluster_token

        use_cluster_token()  # a cluster with token authentication: ray_auth_token_path
        try:
            with sigterm_kept():
                ray.init(address=address or "auto", logging_level=logging.WARNING)
        except ConnectionError as exc:
            # Ray says only "Failed to connect" when the cluster refused the token.
            raise InvalidInput(
                f"No Ray cluster to join ({exc}). Run the job with `--launcher ray` "
                "(ray_address set), or start one with `ray start --head`. If the cluster "
                f"uses token authentication (RAY_AUTH_MODE=token), {SETTING_HINT}."
            ) from None
        except Exception as exc:
            if is_auth_failure(exc):
                raise auth_refused(address or "auto", exc) from None
            raise
    return ray
