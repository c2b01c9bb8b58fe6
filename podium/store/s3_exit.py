"""pyarrow S3 filesystems let go before pyarrow shuts the AWS SDK down at exit.

`pyarrow.fs` registers a finalizer that shuts the AWS SDK down when the interpreter
exits; an `S3FileSystem` still alive after it aborts the process ("terminate called
without an active exception", apache/arrow#41087), turning a finished command's exit
status into -6. Two kinds outlive a command: Podium's own cached filesystem
(`store.read.object_store`) and the ones pyiceberg's FileIO caches per scheme, held in
reference cycles with the tables and commits that used them (an `import` on S3 left 3-4
FileIOs with 2-3 filesystems alive at the finalizer). The handler registered here runs
before pyarrow's (atexit runs last in, first out; `pyarrow.fs` is imported first so its
finalizer is registered first): it clears the caches it was given and collects cycles.
"""

from __future__ import annotations

import atexit
import gc
import threading
from collections.abc import Callable

S3_SCHEMES = ("s3", "s3a", "s3n")  # the URL schemes pyarrow and pyiceberg read as S3

_caches: list[Callable[[], None]] = []
_lock = threading.Lock()
_registered = False


def release_at_exit(clear: Callable[[], None] | None = None) -> None:
    """Let go of this process's S3 filesystems at exit, before pyarrow's finalizer;
    `clear` empties a cache that holds some (called then, once)."""
    global _registered
    with _lock:
        if clear is not None and clear not in _caches:
            _caches.append(clear)
        if _registered:
            return
        import pyarrow.fs  # noqa: F401 - registers pyarrow's finalizer before ours

        atexit.register(_release)
        _registered = True


def _release() -> None:
    for clear in _caches:
        clear()
    gc.collect()
