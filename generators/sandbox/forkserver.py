"""The fork server that runs inside every sandbox worker (bwrap, a container, or bare).

A standalone script (stdlib only, any Python >= 3.9): the host starts it once per worker
and sends jobs on stdin as length-prefixed JSON; for each job it forks a child that
drops privileges, sets rlimits and runs the code as `__main__`, then kills everything
the job left behind, wipes /tmp (and /dev/shm, /dev/mqueue, System V IPC) and answers
on stdout. Forking a warm interpreter costs a few milliseconds where starting Python
costs tens. While a job runs the server sums the CPU time of all the job's processes
(it is pid 1 of their pid namespace, so /proc lists exactly them) and stops the job
when the total passes its CPU budget: RLIMIT_CPU alone bounds each process, not a run.

    python3 -s forkserver.py --tmp /tmp [--wipe /dev/shm] [--uid 61000] [--seccomp HEX]
"""

import argparse
import atexit
import builtins
import collections
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
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
IPC_RMID = 0
STDERR_TAIL = 65536
# How often a running job's CPU total is read (the first read comes this late too, so
# the short jobs that are most of the work never pay for it).
CPU_POLL_S = 0.05
# A tmpfs with less room than this after a failed job was filled by it.
FULL_BYTES = 1024 * 1024
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


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_seccomp(program):
    """Load a compiled filter on this process (and so on every job it forks).

    Where the engine already applies its own profile (Docker) this one stacks on top:
    the kernel runs both and the stricter answer wins.
    """
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


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


Outcome = collections.namedtuple(
    "Outcome", "stopped status cpu_s out_size err_size stderr full_tmpfs"
)


def classify(outcome, limits):
    """(status, exit code, signal, detail) of a finished job."""
    cpu_limit = f"cpu limit: the run used {outcome.cpu_s:.1f} CPU-s of {limits['cpu_s']:g}"
    if outcome.stopped == "wall":
        return "timeout", None, None, f"wall-clock limit: {limits['wall_s']:g} s"
    if outcome.stopped == "cpu":
        return "timeout", None, signal.SIGKILL, cpu_limit
    status = outcome.status
    cap = int(limits["output_bytes"])
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and outcome.cpu_s >= limits["cpu_s"]):
            return "timeout", None, sig, cpu_limit
        if sig == signal.SIGXFSZ:
            return "output_limit", None, sig, f"file size limit: {cap} bytes"
        return "killed", None, sig, ""
    rc = os.WEXITSTATUS(status)
    if rc == 0:
        return "ok", rc, None, ""
    if outcome.full_tmpfs is not None:
        path, size_mb = outcome.full_tmpfs
        return "output_limit", rc, None, f"disk limit: {path} is full ({size_mb} MiB)"
    if outcome.out_size >= cap or outcome.err_size >= cap:
        return "output_limit", rc, None, f"output limit: {cap} bytes"
    last = outcome.stderr.rstrip().rsplit("\n", 1)[-1]
    if last.startswith("MemoryError"):
        return "oom", rc, None, ""
    if "[Errno 27]" in last:  # EFBIG: Python ignores SIGXFSZ, so the write failed
        return "output_limit", rc, None, f"file size limit: {cap} bytes"
    return "error", rc, None, ""


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def namespace_cpu_s(reaped_base):
    """CPU seconds used by every process of the job, alive or not.

    A process's time stays in its /proc/PID/stat until its parent reaps it, then moves
    into the parent's cumulative fields, and so on up to us (the namespace's init): so
    the live processes' own and reaped-children's time, plus what we reaped ourselves
    since the job began, is the whole run's.
    """
    ticks = 0
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile: its time is now its parent's
        # Fields after the command: state is [0]; utime, stime, cutime, cstime [11:15].
        ticks += sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK") + children_cpu_s() - reaped_base


def wait_for_job(pid, limits):
    """Wait until the job's main process ends, the wall clock runs out or the run's
    processes together pass the CPU budget; kill it in the last two cases.

    Returns (status, rusage, which limit stopped it or None, the run's CPU total or None).
    """
    budget = float(limits["cpu_s"])
    deadline = time.monotonic() + float(limits["wall_s"])
    reaped_base = children_cpu_s()
    # Outside our own pid namespace (bare mode) /proc is the host's: nothing to sum.
    tree = os.getpid() == 1
    pidfd = os.pidfd_open(pid)
    stopped, total = None, None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = "wall"
                break
            ready, _, _ = select.select([pidfd], [], [], min(left, CPU_POLL_S) if tree else left)
            if ready:
                break
            if tree:
                total = namespace_cpu_s(reaped_base)
                if total > budget:
                    stopped = "cpu"
                    break
        if stopped is not None:
            os.kill(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
        if total is not None and stopped is None:
            total = namespace_cpu_s(reaped_base)
        return status, usage, stopped, total
    finally:
        os.close(pidfd)


def filled_tmpfs(paths):
    """The first of `paths` that is (nearly) out of space or inodes: (path, size in MiB)."""
    for path in paths:
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        if st.f_blocks and (st.f_bavail * st.f_frsize < FULL_BYTES or st.f_favail == 0):
            return path, st.f_blocks * st.f_frsize // (1024 * 1024)
    return None


def run_job(req, opts, as_base):
    files = prepare_files(req)
    limits = req["limits"]
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        run_child(req, opts, files, as_base)
    status, usage, stopped, total = wait_for_job(pid, limits)
    wall = time.monotonic() - start
    kill_leftovers(pid)
    cpu = usage.ru_utime + usage.ru_stime
    if total is not None:
        cpu = max(cpu, total)
    cap = int(limits["output_bytes"])
    stdout, out_size = read_capped(files["stdout"], cap)
    stderr, err_size = read_capped(files["stderr"], min(cap, STDERR_TAIL), tail=True)
    for name in ("stdin", "stdout", "stderr"):
        os.close(files[name])
    scratch = [path for path in [opts.tmp, *opts.wipe] if os.path.isdir(path)]
    full = filled_tmpfs(scratch)
    for path in scratch:
        wipe(path)
    if os.getpid() == 1:
        # Only in our own namespaces: a bare server would see the host's IPC objects.
        clear_sysv_ipc(opts.uid)
    outcome = Outcome(stopped, status, cpu, out_size, err_size, stderr, full)
    state, rc, sig, detail = classify(outcome, limits)
    return {
        "status": state,
        "exit_code": rc,
        "signal": sig,
        "stdout": stdout,
        "stderr": stderr,
        "wall_s": round(wall, 6),
        "cpu_s": round(cpu, 6),
        "truncated": out_size > len(stdout.encode()) or out_size >= cap,
        "detail": detail,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tmp", default="/tmp")
    parser.add_argument("--uid", type=int, default=0)
    parser.add_argument("--wipe", action="append", default=[], help="Also emptied after jobs.")
    parser.add_argument("--seccomp", default="", help="A BPF program (hex) to install first.")
    opts = parser.parse_args()
    if opts.seccomp:
        install_seccomp(bytes.fromhex(opts.seccomp))
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
