"""Data files on S3 read with pyarrow's own S3 filesystem, without pyiceberg.

pyiceberg's FileIO builds the same `pyarrow.fs.S3FileSystem` from the catalog's `s3.*`
properties; building it here from those properties lets a cold read of an object-store
table served from the plan cache (`podium.store.read.plan_cache`) skip importing
pyiceberg, SQLAlchemy's catalog and the table's metadata (~0.9 s of a 1.6 s cold page on
PostgreSQL + S3). Properties not given fall back to pyarrow's own lookup (the AWS_*
environment variables, ~/.aws), as pyiceberg's do. The filesystem holds the keys: it is
never logged or put in an environment, and it lives only in this process.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from podium.config import get_settings
from podium.store.s3_exit import S3_SCHEMES, release_at_exit

if TYPE_CHECKING:
    import pyarrow.fs as pafs


def is_s3(path: str) -> bool:
    return urlparse(path).scheme in S3_SCHEMES


def s3_key(path: str) -> str:
    """`s3://bucket/key` as pyarrow names it (`bucket/key`), not decoded, as pyiceberg
    writes it (a key with a space or `%` is stored under those very bytes)."""
    parsed = urlparse(path)
    return parsed.netloc + parsed.path


def s3_filesystem() -> pafs.S3FileSystem:
    """The S3 filesystem the catalog's properties describe (one per process and set of
    properties)."""
    return _filesystem(tuple(sorted(get_settings().catalog_properties.items())))


def first_property(properties: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` set (non-empty) in the catalog's properties: pyiceberg's
    `s3.*` names and their `client.*` fallbacks."""
    return next((properties[n] for n in names if properties.get(n)), None)


@functools.lru_cache(maxsize=4)
def _filesystem(properties: tuple[tuple[str, str], ...]) -> pafs.S3FileSystem:
    import pyarrow.fs as pafs

    props = dict(properties)

    def get(*names: str) -> str | None:
        return first_property(props, *names)

    timeout = get("s3.request-timeout")
    connect = get("s3.connect-timeout")
    release_at_exit(_filesystem.cache_clear)
    return pafs.S3FileSystem(
        access_key=get("s3.access-key-id", "client.access-key-id"),
        secret_key=get("s3.secret-access-key", "client.secret-access-key"),
        session_token=get("s3.session-token", "client.session-token"),
        region=get("s3.region", "client.region"),
        endpoint_override=get("s3.endpoint"),
        proxy_options=get("s3.proxy-uri"),
        request_timeout=float(timeout) if timeout else None,
        connect_timeout=float(connect) if connect else None,
        force_virtual_addressing=(get("s3.force-virtual-addressing") or "").lower() == "true",
    )
