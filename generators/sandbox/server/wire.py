"""The fork server's framing on stdin/stdout: a 4-byte big-endian length, then JSON."""

import json
import struct


def read_msg(stream):
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return json.loads(stream.read(size))


def write_msg(stream, obj):
    data = json.dumps(obj).encode()
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()
