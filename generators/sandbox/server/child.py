"""The forked child of one job: confine this process, then run the code as `__main__`."""

import argparse
import atexit
import builtins
import linecache
import os
import signal
import sys
import types
from typing import Any, NoReturn

from generators.sandbox.server.confine import PR_SET_NO_NEW_PRIVS, libc, set_limits

SCRIPT_NAME = "main.py"
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
}


def exit_code_of(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run_main(source: str) -> None:
    """Run the source as `python main.py` would: a fresh __main__ module."""
    path = SCRIPT_NAME
    # The code never touches a file the job could reach; tracebacks still show its
    # lines because linecache holds them (mtime None: never re-read from disk).
    lines = source.splitlines(keepends=True)
    linecache.cache[path] = (len(source), None, lines, path)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    exec(compile(source, path, "exec"), main.__dict__)


def run_child(
    req: dict[str, Any], opts: argparse.Namespace, files: dict[str, int], as_base: int
) -> NoReturn:
    """In the forked child: confine this process, then run the job's code as __main__."""
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        set_limits(req["limits"], as_base)
        if os.getuid() == 0 and opts.uid:
            os.setgroups([])
            os.setgid(opts.uid)
            os.setuid(opts.uid)
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        os.dup2(files["stdin"], 0)
        os.dup2(files["stdout"], 1)
        os.dup2(files["stderr"], 2)
        os.closerange(3, 1024)
        os.chdir(opts.tmp)
        os.environ.clear()
        os.environ.update(ENV)
        # The job's code may read the __std*__ originals: they must be its files too.
        sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # type: ignore[misc]
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)  # type: ignore[misc]
        sys.stderr = sys.__stderr__ = open(  # type: ignore[misc]
            2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1
        )
        sys.argv = [SCRIPT_NAME, *req.get("args", [])]
        sys.path[0] = opts.tmp
    except BaseException as exc:  # the sandbox itself failed: say so on the real stderr
        os.write(files["stderr"], f"podium-sandbox setup failed: {exc!r}\n".encode())
        os._exit(125)
    rc = 0
    try:
        run_main(req["code"])
    except SystemExit as exc:
        rc = exit_code_of(exc)
    except BaseException as exc:
        tb = exc.__traceback__
        # Drop the server's frames so the traceback reads as if Python ran the file.
        while tb is not None and tb.tb_frame.f_code.co_filename == SERVER_FILE:
            tb = tb.tb_next
        exc.__traceback__ = tb
        sys.excepthook(type(exc), exc, tb)
        rc = 1
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        rc = rc or 120
    os._exit(rc)


# The file the server runs from (one joined script in a sandbox): frames of it are the
# server's own, never the job's.
SERVER_FILE = run_main.__code__.co_filename
