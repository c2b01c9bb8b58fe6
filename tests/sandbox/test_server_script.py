"""The joined fork server script stands alone: it needs nothing of the checkout."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from generators.sandbox.server_script import PARTS, server_source
from generators.sandbox.worker import SERVER_ENV


def send(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    stream.write(struct.pack(">I", len(body)) + body)
    stream.flush()


def receive(stream: IO[bytes]) -> dict[str, Any]:
    (size,) = struct.unpack(">I", stream.read(4))
    return json.loads(stream.read(size))


def test_every_part_is_in_the_script_and_no_import_of_the_checkout() -> None:
    source = server_source()
    for part in PARTS:
        assert f"# --- {part}\n" in source
    assert "import generators" not in source and "from generators" not in source


def start_isolated_server(tmp_path: Path) -> subprocess.Popen[bytes]:
    """The fork server on the base interpreter (not the venv, where the checkout is
    installed) under -I, with a scratch folder in `tmp_path`."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return subprocess.Popen(
        [os.path.realpath(sys.executable), "-I", "-c", server_source(), "--tmp", str(scratch)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=SERVER_ENV,
    )


def test_the_script_runs_isolated_from_the_checkout(tmp_path: Path) -> None:
    # The base interpreter (not the venv, where the checkout is installed) under -I: no
    # script directory, cwd or PYTHONPATH on sys.path either; a part that still
    # imported another part through the package would fail to start here.
    scratch = tmp_path / "scratch"
    proc = start_isolated_server(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        hello = receive(proc.stdout)
        assert hello["ready"] is True and hello["pid"] == proc.pid
        limits = {
            "wall_s": 20,
            "cpu_s": 10,
            "memory_mb": 256,
            "processes": 8,
            "output_bytes": 10**4,
        }
        code = "import os\nopen('left.txt', 'w').write('x')\nprint(os.getcwd())\n1 / 0\n"
        send(proc.stdin, {"code": code, "limits": limits})
        reply = receive(proc.stdout)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stderr.close()
        proc.stdout.close()
    assert reply["status"] == "error" and reply["exit_code"] == 1, reply
    assert reply["stdout"] == f"{scratch}\n"
    # The server's own frames are cut: the traceback starts at the job's file.
    assert reply["stderr"].startswith('Traceback (most recent call last):\n  File "main.py"')
    assert reply["stderr"].rstrip().endswith("ZeroDivisionError: division by zero")
    assert os.listdir(scratch) == []


def test_the_sandbox_interpreter_is_inside_the_prefix_it_mounts(tmp_path: Path) -> None:
    """From a venv holding a copy of the binary (`venv --copies`; venv.EnvBuilder's
    default), the sandbox ran that copy, outside the base prefix it mounts: 'execvp
    .venv/bin/python: No such file or directory' inside bubblewrap."""
    copies = tmp_path / "copies"
    subprocess.run(
        [sys.executable, "-m", "venv", "--copies", "--without-pip", str(copies)], check=True
    )
    # The module is stdlib only; run from its file, since the package needs the venv's.
    script = Path(__file__).resolve().parents[2] / "generators" / "sandbox" / "server_script.py"
    probe = (
        f"import json, runpy; print(json.dumps(runpy.run_path({str(script)!r})['interpreter']()))"
    )
    done = subprocess.run(
        [str(copies / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True
    )
    exe, prefix = json.loads(done.stdout)
    assert not exe.startswith(str(copies)) and exe.startswith(prefix + os.sep)
    assert subprocess.run([exe, "-c", "pass"]).returncode == 0


def test_a_frame_that_is_no_json_object_is_answered_and_the_server_stays_up(
    tmp_path: Path,
) -> None:
    proc = start_isolated_server(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    limits = {"wall_s": 20, "cpu_s": 10, "memory_mb": 256, "processes": 8, "output_bytes": 10**4}
    try:
        assert receive(proc.stdout)["ready"] is True
        replies = []
        for body in (b"{not json", b"[1, 2]"):
            proc.stdin.write(struct.pack(">I", len(body)) + body)
            proc.stdin.flush()
            replies.append(receive(proc.stdout))
        send(proc.stdin, {"code": "print('still here')", "limits": limits})
        after = receive(proc.stdout)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stderr.close()
        proc.stdout.close()
    assert [r["status"] for r in replies] == ["sandbox_error", "sandbox_error"], replies
    assert "JSON object" in replies[1]["detail"]
    assert after["status"] == "ok" and after["stdout"] == "still here\n", after
