"""Ranged GETs of one S3 object with the standard library, signed with AWS Signature V4.

A cold page read whose plan and footer are cached (`store.read.plan_cache`,
`store.read.footer_cache`) needs one ranged GET of one row group. pyarrow's
`S3FileSystem` would first start the AWS SDK (25-360 ms of a cold command here, growing
with the machine's load) and send a HEAD for the object's size; this module sends the GET
alone over `http.client`, signed as the SDK signs it (`tests/store/test_s3_get.py` checks
the signature against botocore's). Only the plain case is served here: an explicit
endpoint and keys in the catalog's properties, no proxy. Anything else (keys from the
environment or an instance profile, AWS's own endpoints, a proxy) returns None from
`endpoint` and goes through pyarrow's filesystem as before.

The object's size comes from the kept footer; every response's `Content-Range` must
report that size, so a footer kept for another object is never used to read this one.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, urlparse

from podium.store.read.object_store import first_property, s3_key

UNSIGNED = "UNSIGNED-PAYLOAD"
ATTEMPTS = 3  # a dropped keep-alive connection or a 5xx is tried again
_RETRY_STATUS = frozenset({500, 502, 503, 504})


class SizeChanged(OSError):
    """The object is not the size its kept footer says: that footer is not its own."""


@dataclass(frozen=True)
class Endpoint:
    scheme: str  # http or https
    netloc: str  # host[:port] as given
    region: str
    access_key: str
    secret_key: str
    session_token: str | None
    virtual: bool  # bucket.host/key rather than host/bucket/key


def endpoint(properties: dict[str, str]) -> Endpoint | None:
    """The plain endpoint the catalog's `s3.*` properties name, or None when reading
    needs more than a signed GET (no explicit keys or endpoint, a proxy)."""

    def get(*names: str) -> str | None:
        return first_property(properties, *names)

    url = urlparse(get("s3.endpoint") or "")
    access = get("s3.access-key-id", "client.access-key-id")
    secret = get("s3.secret-access-key", "client.secret-access-key")
    if url.scheme not in ("http", "https") or not url.netloc or url.path not in ("", "/"):
        return None
    if not access or not secret or get("s3.proxy-uri"):
        return None
    return Endpoint(
        url.scheme,
        url.netloc,
        get("s3.region", "client.region") or "us-east-1",
        access,
        secret,
        get("s3.session-token", "client.session-token"),
        (get("s3.force-virtual-addressing") or "").lower() == "true",
    )


def signed_headers(
    end: Endpoint, method: str, host: str, path: str, extra: dict[str, str], now: datetime
) -> dict[str, str]:
    """The request's headers with SigV4's `Authorization` (payload unsigned, as the SDK
    does over a connection it trusts); `path` is the URI-encoded request path."""
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    day = stamp[:8]
    headers = {"host": host, "x-amz-content-sha256": UNSIGNED, "x-amz-date": stamp}
    if end.session_token:
        headers["x-amz-security-token"] = end.session_token
    headers.update({k.lower(): v.strip() for k, v in extra.items()})
    names = sorted(headers)
    canonical = "\n".join(
        [method, path, "", *(f"{n}:{headers[n]}" for n in names), "", ";".join(names), UNSIGNED]
    )
    scope = f"{day}/{end.region}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{end.secret_key}".encode()
    for part in (day, end.region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={end.access_key}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return headers


class RangedObject:
    """A read-only, seekable file over one S3 object of known size, each read one signed
    ranged GET: what pyarrow's `PythonFile` needs to read a Parquet file's row groups."""

    def __init__(
        self, end: Endpoint, path: str, size: int, spans: Sequence[tuple[int, int]] = ()
    ) -> None:
        bucket, _, key = s3_key(path).partition("/")
        # The key is sent as it is stored (pyiceberg does not decode it), each byte that
        # is not unreserved percent-encoded once, as S3 signs paths.
        encoded = quote(key, safe="/~")
        self.host = f"{bucket}.{end.netloc}" if end.virtual else end.netloc
        self.path = f"/{encoded}" if end.virtual else f"/{bucket}/{encoded}"
        self._end = end
        self._name = path
        self._size = size
        self._pos = 0
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()
        self.closed = False
        self.gets = 0  # requests sent (tests count them)
        # The byte spans of the file's row groups: a read inside one fetches the whole span
        # in one GET and serves the group's other column chunks from it. pyarrow's
        # pre-buffering would do the same but reads a Python file on its IO threads, which
        # abort the interpreter at exit ("terminate called without an active exception").
        self._spans = sorted(spans)
        self._held: tuple[int, bytes] = (0, b"")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, self._size)[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        stop = self._size if n is None or n < 0 else min(self._size, self._pos + n)
        if stop <= self._pos:
            return b""
        data = self._held_or_get(self._pos, stop)
        self._pos += len(data)
        return data

    def _held_or_get(self, start: int, stop: int) -> bytes:
        held_start, held = self._held
        if held_start <= start and stop <= held_start + len(held):
            return held[start - held_start : stop - held_start]
        span = next((s for s in self._spans if s[0] <= start and stop <= s[1]), None)
        if span is None:
            return self._get(start, stop)
        self._held = (span[0], self._get(*span))
        return self._held[1][start - span[0] : stop - span[0]]

    def close(self) -> None:
        self.closed = True
        self._drop_connection()

    def _drop_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _get(self, start: int, stop: int) -> bytes:
        with self._lock:
            for attempt in range(ATTEMPTS):
                last = attempt == ATTEMPTS - 1
                try:
                    status, headers, body = self._request(start, stop)
                except (http.client.HTTPException, ConnectionError, TimeoutError):
                    self._drop_connection()
                    if last:
                        raise
                    continue
                if status in _RETRY_STATUS and not last:
                    time.sleep(0.1 * 2**attempt)
                    continue
                return self._checked(status, headers, body, start, stop)
        raise AssertionError("unreachable")

    def _request(self, start: int, stop: int) -> tuple[int, http.client.HTTPMessage, bytes]:
        if self._conn is None:
            kind = http.client.HTTPSConnection if self._end.scheme == "https" else None
            self._conn = (kind or http.client.HTTPConnection)(self.host, timeout=60)
        wanted = {"range": f"bytes={start}-{stop - 1}"}
        headers = signed_headers(self._end, "GET", self.host, self.path, wanted, datetime.now(UTC))
        self.gets += 1
        self._conn.request("GET", self.path, headers=headers)
        response = self._conn.getresponse()
        return response.status, response.headers, response.read()

    def _checked(
        self, status: int, headers: http.client.HTTPMessage, body: bytes, start: int, stop: int
    ) -> bytes:
        if status not in (200, 206):
            raise OSError(
                f"S3 answered {status} to a read of {self._name}: {body[:300]!r}. Check the "
                "catalog's s3.* properties (endpoint, keys, region) and that the file exists."
            )
        total = (headers.get("content-range") or "").rpartition("/")[2]
        whole = status == 200 and len(body) == self._size
        if not whole and (total != str(self._size) or len(body) != stop - start):
            from podium.store.read import footer_cache

            footer_cache.forget(self._name)
            raise SizeChanged(
                f"{self._name} is not the {self._size} bytes its cached footer says "
                f"(the server reports {total or len(body)}); the footer is dropped, read again."
            )
        return body if status == 206 else body[start:stop]
