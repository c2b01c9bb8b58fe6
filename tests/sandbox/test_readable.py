"""Talking to sandbox workers at descriptor numbers past 1024: a long test session (or a
server) held that many, and every docker sandbox test failed with "filedescriptor out of
range in select()"."""

from __future__ import annotations

import os
import resource

import pytest

from generators.sandbox.readable import readable


def test_a_pipe_numbered_past_fd_setsize_is_waited_on() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1100:
        pytest.skip(f"the hard limit on open files is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1100), hard))
    held: list[int] = []
    try:
        read_end, write_end = os.pipe()
        high = os.dup2(read_end, 1050)
        held += [read_end, write_end, high]
        assert not readable(high, 0)
        os.write(write_end, b"x")
        assert readable(high, 1.0)
        os.close(write_end)
        held.remove(write_end)
        assert os.read(high, 1) == b"x" and readable(high, 1.0)  # the end is readable too
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
