"""The Ray cluster a job fans its work out over (imported lazily: Ray is an extra).

A job launched with `launcher: ray` runs as a Ray job, where `ray.init()` joins the
cluster it runs on ($RAY_ADDRESS is set by Ray). Elsewhere it joins a running local
cluster (`ray start --head`), and says how to get one if there is none.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from podium.errors import InvalidInput


def ray_module() -> Any:
    """`ray`, joined to the cluster (once per process)."""
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
        try:
            ray.init(address=address or "auto", logging_level=logging.WARNING)
        except ConnectionError as exc:
            raise InvalidInput(
                f"No Ray cluster to join ({exc}). Run the job with `--launcher ray` "
                "(ray_address set), or start one with `ray start --head`."
            ) from None
    return ray
