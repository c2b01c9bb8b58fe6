"""The fork server's framing on stdin/stdout: a 4-byte big-endian length, then JSON."""

import json
import struct
from typing import IO, Any


def read_msg(stream: IO[bytes]) -> "dict[str, Any] | None":
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    msg = json.loads(stream.read(size))
    if not isinstance(msg, dict):
        raise ValueError(f"a message must be a JSON object, not {type(msg).__name__}")
    return msg


def write_msg(stream: IO[bytes], obj: dict[str, Any]) -> None:
    data = json.dumps(obj).encode()
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()
