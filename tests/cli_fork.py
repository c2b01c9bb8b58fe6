"""Run `python -m podium.cli ...` as a forked child of a pre-imported process.

A command-line test pays ~2 s (twice that on a loaded machine) to import pyiceberg,
pyarrow, SQLAlchemy and pandas before the command does anything, and the suite runs the
CLI hundreds of times. Each pytest worker therefore starts one small server that imports
those libraries once and, per call, forks: the child takes the caller's argv, environment,
working directory and stdin/stdout/stderr (passed as file descriptors over a Unix
socket), then runs `podium.cli` as `-m` would. It is the same code from `main()` down,
in a fresh process each time; only the interpreter start and the third-party imports
are shared, and no Podium module is imported before the fork (none may read settings
ahead of the caller's environment).

`run()` takes the arguments of `subprocess.run` that the tests use and returns a
`CompletedProcess`; anything else, or PODIUM_TEST_FORK=0, runs a real subprocess.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

_CLI_PREFIX = ("-m", "podium.cli")
_SUPPORTED = {"capture_output", "text", "timeout", "env", "cwd", "check", "input"}
_HEADER = struct.Struct("!I")
_STATUS = struct.Struct("!i")
_PRELOAD = (
    "pyiceberg.io.pyarrow",
    "pyiceberg.catalog.sql",
    "pyarrow.dataset",
    "pyarrow.compute",
    "pyarrow.parquet",
    "sqlalchemy",
    "pandas",
    "duckdb",
    "pydantic",
    "typer",
    "click",
    "rich.console",
    "rich.table",
    "jsonschema",
    "yaml",
    "fsspec",
    "openai",  # its ~650 pydantic types: the judge, compare and generate commands' cards
)

_INTERPRETER_PATH: list[str] = []  # the server's sys.path less its PYTHONPATH
_lock = threading.Lock()
_server: tuple[subprocess.Popen[bytes], str] | None = None


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(cmd, **kwargs)`, forked from the warm server when `cmd` is
    `[sys.executable, "-m", "podium.cli", ...]` and the arguments are ones it supports."""
    argv = [str(a) for a in cmd]
    usable = (
        os.environ.get("PODIUM_TEST_FORK", "1") != "0"
        and argv[:3] == [sys.executable, *_CLI_PREFIX]
        and set(kwargs) <= _SUPPORTED
        and kwargs.get("capture_output", False)
    )
    if not usable:
        return subprocess.run(cmd, **kwargs)  # noqa: PLW1510 - check is the caller's
    return _forked(argv, **kwargs)


def _forked(
    argv: list[str],
    *,
    capture_output: bool = True,
    text: bool = False,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    check: bool = False,
    input: str | bytes | None = None,  # noqa: A002 - subprocess.run's name
) -> subprocess.CompletedProcess[Any]:
    del capture_output  # always captured: `run` only forks when it is asked for
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin = tempfile.TemporaryFile()
        if input is not None:
            stdin.write(input.encode() if isinstance(input, str) else input)
            stdin.seek(0)
        request = {
            "argv": ["-m", *argv[2:]],
            "env": dict(os.environ if env is None else env),
            "cwd": str(cwd if cwd is not None else Path.cwd()),
        }
        with stdin, _connect() as conn:
            body = json.dumps(request).encode()
            socket.send_fds(
                conn, [_HEADER.pack(len(body))], [stdin.fileno(), out.fileno(), err.fileno()]
            )
            conn.sendall(body)
            pid = _STATUS.unpack(_recv_exact(conn, _STATUS.size))[0]
            conn.settimeout(timeout)
            try:
                status = _STATUS.unpack(_recv_exact(conn, _STATUS.size))[0]
            except TimeoutError:
                _kill(pid)
                conn.settimeout(None)
                _recv_exact(conn, _STATUS.size)
                stdout, stderr = _read(out, text), _read(err, text)
                raise subprocess.TimeoutExpired(argv, timeout or 0, stdout, stderr) from None
            except BaseException:  # the test's own time-out, Ctrl-C: as subprocess.run does
                _kill(pid)
                raise
        proc = subprocess.CompletedProcess(argv, status, _read(out, text), _read(err, text))
    if check:
        proc.check_returncode()
    return proc


def _read(file: Any, text: bool) -> str | bytes:
    file.seek(0)
    data: bytes = file.read()
    # text=True means the locale's encoding with universal newlines, as subprocess does
    return data.decode().replace("\r\n", "\n").replace("\r", "\n") if text else data


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the CLI fork server closed the connection")
        data += chunk
    return data


def _connect() -> socket.socket:
    global _server
    with _lock:
        if _server is None or _server[0].poll() is not None:
            _server = _start()
        path = _server[1]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    return conn


def _start() -> tuple[subprocess.Popen[bytes], str]:
    folder = tempfile.mkdtemp(prefix="podium-cli-fork-")
    path = os.path.join(folder, "socket")
    with open(os.path.join(folder, "server.log"), "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-P", __file__, path],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    for _ in range(600):
        if os.path.exists(path) or proc.poll() is not None:
            break
        time.sleep(0.05)
    if not os.path.exists(path):
        log_text = Path(folder, "server.log").read_text(errors="replace")
        raise RuntimeError(f"the CLI fork server did not start (exit {proc.poll()}):\n{log_text}")
    atexit.register(_stop, proc, folder)
    return proc, path


def _stop(proc: subprocess.Popen[bytes], folder: str) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    for name in os.listdir(folder):
        os.unlink(os.path.join(folder, name))
    os.rmdir(folder)


# --- the server ----------------------------------------------------------------------


def _serve(path: str) -> None:
    import importlib
    import selectors

    own = set(_split(os.environ.get("PYTHONPATH")))
    _INTERPRETER_PATH[:] = [p for p in sys.path if p and os.path.abspath(p) not in own]
    for name in _PRELOAD:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # the socket appears only once it accepts
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    waiting: dict[int, socket.socket] = {}
    parent = os.getppid()
    while os.getppid() == parent:  # a worker that died without atexit leaves no server
        for key, _ in selector.select(timeout=2):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                pid = _spawn(conn, [listener, selector, wake_r, wake_w])
                if pid is None:
                    conn.close()
                    continue
                conn.sendall(_STATUS.pack(pid))
                waiting[pid] = conn
            else:
                os.read(wake_r, 4096)
        _reap(waiting)


def _reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(_STATUS.pack(os.waitstatus_to_exitcode(status)))
            except OSError:
                pass  # the caller gave up (its own timeout) and closed
            conn.close()


def _spawn(conn: socket.socket, server_fds: list[Any]) -> int | None:
    header, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
    if len(header) != _HEADER.size or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    request = json.loads(_recv_exact(conn, _HEADER.unpack(header)[0]))
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    try:  # the child: become `python -m podium.cli ...` as the caller started it
        conn.close()
        for item in server_fds:
            item.close() if hasattr(item, "close") else os.close(item)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["-m", *request["argv"][2:]]  # runpy sets [0] to the module's file
        sys.path[:] = _start_path(request["cwd"])
    except BaseException:
        os._exit(70)
    _run_as_main(request["argv"][1])


def _start_path(cwd: str) -> list[str]:
    """sys.path as `python -m` builds it from the caller's environment: the working
    directory (unless PYTHONSAFEPATH), PYTHONPATH, then the interpreter's own."""
    head = [] if os.environ.get("PYTHONSAFEPATH") else [cwd]
    return [*head, *_split(os.environ.get("PYTHONPATH")), *_INTERPRETER_PATH]


def _split(value: str | None) -> list[str]:
    return [os.path.abspath(p) for p in (value or "").split(os.pathsep) if p]


def _run_as_main(module: str) -> None:
    import runpy
    import traceback

    code = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        if exit_.code is None:
            code = 0
        elif isinstance(exit_.code, int):
            code = exit_.code
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    _serve(sys.argv[1])
