"""The fork server that runs inside every sandbox worker (bwrap, a container, or bare).

A standalone script (stdlib only, any Python >= 3.9): the host starts it once per worker
and sends jobs on stdin as length-prefixed JSON; for each job it forks a child that
drops privileges, sets rlimits and runs the code as `__main__`, then kills everything
the job left behind, wipes /tmp (and /dev/shm, System V IPC) and answers on stdout.
Forking a warm interpreter costs a few milliseconds where starting Python costs tens.

    python3 -s forkserver.py --tmp /tmp [--wipe /dev/shm] [--uid 61000]
"""

import argparse
import atexit
import builtins
import ctypes
import json
import linecache
import os
import resource
import select
import shutil
import signal
import struct
import sys
import time
import types

PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
IPC_RMID = 0
STDERR_TAIL = 65536
SCRIPT_NAME = "main.py"
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
}

_libc = ctypes.CDLL(None, use_errno=True)


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


def vm_size():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * resource.getpagesize()


def set_limits(limits, as_base):
    cpu = max(1, int(limits["cpu_s"] + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mem = as_base + int(limits["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    out = int(limits["output_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (out, out))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # The server shares the job's uid in containers, so it counts as one process.
    nproc = int(limits["processes"]) + 1
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def exit_code_of(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run_main(source):
    """Run the source as `python main.py` would: a fresh __main__ module."""
    path = SCRIPT_NAME
    # The code never touches a file the job could reach; tracebacks still show its
    # lines because linecache holds them (mtime None: never re-read from disk).
    lines = source.splitlines(keepends=True)
    linecache.cache[path] = (len(source), None, lines, path)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    exec(compile(source, path, "exec"), main.__dict__)


def run_child(req, opts, files, as_base):
    """In the forked child: confine this process, then run the job's code as __main__."""
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        set_limits(req["limits"], as_base)
        if os.getuid() == 0 and opts.uid:
            os.setgroups([])
            os.setgid(opts.uid)
            os.setuid(opts.uid)
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
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
    except BaseException:
        kind, value, tb = sys.exc_info()
        # Drop the server's frames so the traceback reads as if Python ran the file.
        while tb is not None and tb.tb_frame.f_code.co_filename == SERVER_FILE:
            tb = tb.tb_next
        if value is not None:
            value.__traceback__ = tb
        sys.excepthook(kind, value, tb)
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


def kill_leftovers(job_pgid):
    """Kill every process the job started, including double-forked daemons."""
    while True:
        try:
            if os.getpid() == 1:
                # We are the init of our own pid namespace: -1 means "all but me".
                os.kill(-1, signal.SIGKILL)
            else:
                os.killpg(job_pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.0005)
            if os.getpid() != 1:
                # Bare mode cannot see grandchildren that left the group; stop once the
                # group is gone (there is no containment promise without a sandbox).
                try:
                    os.killpg(job_pgid, 0)
                except ProcessLookupError:
                    return


def wipe(path):
    def fix_and_retry(func, target, _exc):
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
        except OSError:
            pass
        try:
            func(target)
        except OSError:
            pass

    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, onerror=fix_and_retry)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                fix_and_retry(os.unlink, entry.path, None)


def clear_sysv_ipc(uid):
    """Remove System V shared memory, semaphores and queues a job left in our namespace.

    Removal needs the owner's uid (or CAP_SYS_ADMIN, which the server must not hold),
    so a short-lived child becomes the job's uid to do it; usually there is nothing.
    """
    found = []
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                found += [(kind, int(line.split()[1])) for line in fh.read().splitlines()[1:]]
        except OSError:
            continue
    if not found:
        return
    pid = os.fork()
    if pid == 0:
        try:
            if os.getuid() == 0 and uid:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            for kind, ident in found:
                if kind == "shm":
                    _libc.shmctl(ident, IPC_RMID, None)
                elif kind == "sem":
                    _libc.semctl(ident, 0, IPC_RMID)
                else:
                    _libc.msgctl(ident, IPC_RMID, None)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def read_capped(fd, limit, tail=False):
    size = os.fstat(fd).st_size
    start = max(0, size - limit) if tail else 0
    os.lseek(fd, start, os.SEEK_SET)
    chunks, left = [], min(limit, size - start)
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks).decode("utf-8", "replace"), size


def prepare_files(req):
    """Anonymous in-memory files for the job's stdio: nothing on any path to tamper with."""
    files = {}
    for name in ("stdin", "stdout", "stderr"):
        files[name] = os.memfd_create("podium-" + name, 0)
    os.write(files["stdin"], (req.get("stdin") or "").encode())
    os.lseek(files["stdin"], 0, os.SEEK_SET)
    return files


def classify(timed_out, status, cpu_s, limits, out_size, err_size, stderr):
    if timed_out:
        return "timeout", None, None
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_s >= limits["cpu_s"]):
            return "timeout", None, sig
        if sig == signal.SIGXFSZ:
            return "output_limit", None, sig
        return "killed", None, sig
    rc = os.WEXITSTATUS(status)
    if rc == 0:
        return "ok", rc, None
    cap = int(limits["output_bytes"])
    if out_size >= cap or err_size >= cap:
        return "output_limit", rc, None
    last = stderr.rstrip().rsplit("\n", 1)[-1]
    if last.startswith("MemoryError"):
        return "oom", rc, None
    return "error", rc, None


def run_job(req, opts, as_base):
    files = prepare_files(req)
    limits = req["limits"]
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        run_child(req, opts, files, as_base)
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([pidfd], [], [], float(limits["wall_s"]))
    timed_out = not ready
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    os.close(pidfd)
    kill_leftovers(pid)
    cpu = usage.ru_utime + usage.ru_stime
    cap = int(limits["output_bytes"])
    stdout, out_size = read_capped(files["stdout"], cap)
    stderr, err_size = read_capped(files["stderr"], min(cap, STDERR_TAIL), tail=True)
    for name in ("stdin", "stdout", "stderr"):
        os.close(files[name])
    for path in [opts.tmp, *opts.wipe]:
        if os.path.isdir(path):
            wipe(path)
    if os.getpid() == 1:
        # Only in our own namespaces: a bare server would see the host's IPC objects.
        clear_sysv_ipc(opts.uid)
    state, rc, sig = classify(timed_out, status, cpu, limits, out_size, err_size, stderr)
    return {
        "status": state,
        "exit_code": rc,
        "signal": sig,
        "stdout": stdout,
        "stderr": stderr,
        "wall_s": round(wall, 6),
        "cpu_s": round(cpu, 6),
        "truncated": out_size > len(stdout.encode()) or out_size >= cap,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tmp", default="/tmp")
    parser.add_argument("--uid", type=int, default=0)
    parser.add_argument("--wipe", action="append", default=[], help="Also emptied after jobs.")
    opts = parser.parse_args()
    # Jobs must not signal or ptrace the server (they may share its uid in containers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    os.umask(0o022)
    inp = open(os.dup(0), "rb")
    out = open(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    as_base = vm_size()
    write_msg(out, {"ready": True, "python": sys.version.split()[0], "pid": os.getpid()})
    while True:
        req = read_msg(inp)
        if req is None:
            return
        try:
            reply = run_job(req, opts, as_base)
        except Exception as exc:  # report and stay up; the host decides what to do
            reply = {"status": "sandbox_error", "detail": repr(exc)}
        write_msg(out, reply)


SERVER_FILE = main.__code__.co_filename

if __name__ == "__main__":
    main()
