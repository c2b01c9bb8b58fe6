"""Escapes and leaks beyond the classics: new namespaces and kernel surfaces, IPC that
outlives a run, disk and CPU budgets, host paths, setuid, argv/env, `kill -1`, sockets.

Each probe runs on both backends and checks the exact outcome, then that the pool runs
the next job with nothing left over.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import sys
from pathlib import Path

import pytest
from sandbox_probes import assert_next_job_works, outcome, record, run

from generators.sandbox import Limits, Sandbox

REPO = Path(__file__).resolve().parents[2]


def syscall_numbers(*names: str) -> dict[str, int]:
    """This architecture's numbers (the sandbox runs on the host's kernel and arch)."""
    import pyseccomp

    return {name: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name) for name in names}


def test_new_namespaces_are_refused(box: Sandbox) -> None:
    """In a new user namespace a process holds every capability there (and reaches
    netfilter, mounts); `clone` with namespace flags must fail like `unshare` does, and
    `clone3` must answer ENOSYS so libc falls back to the filtered `clone`."""
    numbers = syscall_numbers("clone", "clone3", "setns")
    code = f"""
    import ctypes, errno, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    NR = {numbers!r}
    NEWUSER, NEWNET, NEWNS, SIGCHLD = 0x10000000, 0x40000000, 0x00020000, 17

    def outcome(rc):
        if rc == 0:
            os._exit(0)  # a child that got through: leave at once
        if rc > 0:
            os.waitpid(rc, 0)
            return "ALLOWED"
        return errno.errorcode[ctypes.get_errno()]

    args = (ctypes.c_uint64 * 11)()
    args[0], args[4] = NEWUSER | NEWNET, SIGCHLD  # clone_args.flags, .exit_signal
    fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    print({{
        "unshare": outcome(libc.unshare(NEWUSER)),
        "clone": outcome(libc.syscall(NR["clone"], ctypes.c_ulong(NEWUSER | NEWNET | SIGCHLD),
                                      None, None, None, None)),
        "clone_mnt": outcome(libc.syscall(NR["clone"], ctypes.c_ulong(NEWNS | SIGCHLD),
                                          None, None, None, None)),
        "clone3": outcome(libc.syscall(NR["clone3"], ctypes.byref(args),
                                       ctypes.c_size_t(ctypes.sizeof(args)))),
        "setns": outcome(libc.syscall(NR["setns"], fd, NEWNET)),
    }})
    pid = os.fork()  # plain fork (clone without namespace flags) still works
    if pid == 0:
        os._exit(3)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """
    result = run(box, code)
    assert result.status == "ok", result
    found, forked = result.stdout.splitlines()
    assert ast.literal_eval(found) == {
        "unshare": "EPERM",
        "clone": "EPERM",
        "clone_mnt": "EPERM",
        "clone3": "ENOSYS",
        "setns": "EPERM",
    }
    assert forked == "3"
    assert_next_job_works(box)
    record(
        box,
        "new namespaces: `unshare`, `clone(NEWUSER+NEWNET)`, `clone3`, `setns`",
        "EPERM, EPERM, ENOSYS, EPERM",
    )


def test_kernel_surfaces_are_refused(box: Sandbox) -> None:
    numbers = syscall_numbers("keyctl", "add_key", "bpf", "perf_event_open", "userfaultfd")
    code = f"""
    import ctypes, errno, os, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    NR = {numbers!r}

    def outcome(rc):
        return "ALLOWED" if rc >= 0 else errno.errorcode[ctypes.get_errno()]

    sibling = os.fork()
    if sibling == 0:
        time.sleep(30)
        os._exit(0)
    found = {{
        "keyctl": outcome(libc.syscall(NR["keyctl"], 0, -3, 0)),
        "add_key": outcome(libc.syscall(NR["add_key"], b"user", b"podium", b"x", 1, -3)),
        "bpf": outcome(libc.syscall(NR["bpf"], 0, None, 0)),
        "perf_event_open": outcome(libc.syscall(NR["perf_event_open"], None, 0, -1, -1, 0)),
        "userfaultfd": outcome(libc.syscall(NR["userfaultfd"], 0)),
        "mount": outcome(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
        "ptrace_sibling": outcome(libc.ptrace(16, sibling, None, None)),
        "personality": outcome(libc.personality(0x0040000)),  # ADDR_NO_RANDOMIZE
    }}
    os.kill(sibling, 9)
    print(found)
    """
    result = run(box, code)
    assert result.status == "ok", result
    found = ast.literal_eval(result.stdout)
    assert found == dict.fromkeys(found, "EPERM") and len(found) == 8, found
    assert_next_job_works(box)
    record(
        box,
        "`keyctl`, `add_key`, `bpf`, `perf_event_open`, `userfaultfd`, `mount`, "
        "`ptrace` of a sibling, `personality(ADDR_NO_RANDOMIZE)`",
        "EPERM (each)",
    )


def test_posix_mqueue_and_sysv_ipc_do_not_survive_a_run(box: Sandbox) -> None:
    mq = """
    import ctypes, ctypes.util, os
    rt = ctypes.CDLL(ctypes.util.find_library("rt") or None, use_errno=True)
    rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    libc = ctypes.CDLL(None, use_errno=True)
    """
    leave = (
        mq
        + """
    IPC_CREAT = 0o1000
    print(rt.mq_open(b"/podium-left", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0,
          libc.shmget(0, 4096, IPC_CREAT | 0o600) >= 0,
          libc.semget(0, 1, IPC_CREAT | 0o600) >= 0,
          libc.msgget(0, IPC_CREAT | 0o600) >= 0)
    """
    )
    assert run(box, leave).stdout == "True True True True\n"
    look = (
        mq
        + """
    queue = rt.mq_open(b"/podium-left", os.O_RDWR, 0, None)
    ipc = [len(open(f"/proc/sysvipc/{k}").read().splitlines()) - 1 for k in ("shm", "sem", "msg")]
    print(queue, os.strerror(ctypes.get_errno()), ipc)
    """
    )
    for _ in range(2):  # the next job on each of the two workers
        result = run(box, look)
        assert result.stdout == "-1 No such file or directory [0, 0, 0]\n", result
    assert_next_job_works(box)
    record(box, "POSIX mqueue + SysV shm/sem/msg left for the next run", "gone")


def test_filling_tmp_is_a_disk_limit(box: Sandbox) -> None:
    # Files smaller than the per-file cap, so only the tmpfs's size stops the writes.
    code = """
    i = 0
    while True:
        with open(f"/tmp/fill-{i}", "wb") as fh:
            fh.write(b"x" * 150_000)
        i += 1
    """
    result = run(box, code)
    assert result.status == "output_limit", result
    assert result.detail == "disk limit: /tmp is full (256 MiB)", result
    assert "No space left on device" in result.stderr
    assert_next_job_works(box)  # and /tmp is empty again
    record(box, "filling /tmp (many files)", outcome(result))


def test_one_file_over_the_cap_is_a_file_size_limit(box: Sandbox) -> None:
    result = run(box, "open('/tmp/big', 'wb').write(b'x' * 10_000_000)\n")
    assert result.status == "output_limit", result
    assert result.detail == f"file size limit: {box.limits.output_bytes} bytes", result
    assert_next_job_works(box)
    record(box, "one 10 MB file in /tmp", outcome(result))


def test_cpu_budget_covers_all_processes_of_a_run(box: Sandbox) -> None:
    """Four children of 3 CPU-s each stay under a per-process limit of 4 s; the run's
    budget of 4 CPU-s stops them all."""
    code = """
    import os, time
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            start = time.process_time()
            while time.process_time() - start < 3:
                pass
            os._exit(0)
        pids.append(pid)
    print([os.waitpid(pid, 0)[1] for pid in pids])
    """
    result = run(box, code, limits=Limits(wall_s=60, cpu_s=4, memory_mb=256, processes=16))
    assert result.status == "timeout", result
    assert result.detail.startswith("cpu limit: the run used "), result
    assert result.detail.endswith(" CPU-s of 4"), result
    assert result.stdout == ""  # the parent never saw its children finish
    assert 4 <= result.cpu_s < 12, result
    assert_next_job_works(box)
    record(box, "4 children x 3 CPU-s under a 4 CPU-s budget", outcome(result))


def test_no_host_path_is_visible_inside(box: Sandbox) -> None:
    code = """
    import json, os, sys
    seen = {"cwd": os.getcwd(), "environ": dict(os.environ), "path": sys.path}
    for name in ("self/mountinfo", "1/mountinfo", "self/cmdline", "1/cmdline",
                 "self/environ", "1/environ", "self/cgroup"):
        try:
            seen[name] = open(f"/proc/{name}", "rb").read().decode("utf-8", "replace")
        except OSError as exc:
            seen[name] = type(exc).__name__
    print(json.dumps(seen))
    """
    result = run(box, code)
    assert result.status == "ok", result
    seen = json.loads(result.stdout)
    assert "/opt/podium/forkserver.py" in seen["1/cmdline"] or box.backend == "docker"
    assert seen["self/mountinfo"].count("\n") > 3, seen
    text = result.stdout
    # The interpreter is bound read-only at its own path (documented in the README);
    # everything else of the host must stay out of sight.
    text = text.replace(os.path.realpath(sys.base_prefix), "<interpreter>")
    hidden = {"the checkout": str(REPO), "PODIUM_HOME": os.environ["PODIUM_HOME"]}
    if len(Path.home().parts) > 1:
        hidden["$HOME"] = str(Path.home())
    leaks = {name: path for name, path in hidden.items() if path in text}
    assert leaks == {}, text
    assert_next_job_works(box)
    record(box, "host paths in mountinfo, environ, cmdline, cwd", "none (checkout, home)")


def test_setuid_binaries_gain_nothing(box: Sandbox) -> None:
    code = """
    import os, stat, subprocess, time
    setuid = [p for p in ("/bin/su", "/usr/bin/su")
              if os.path.exists(p) and os.stat(p).st_mode & stat.S_ISUID]
    proc = subprocess.Popen([setuid[0], "root", "-c", "id"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)  # prompting for a password, or exited (a zombie keeps its uids)
    uids = next(line for line in open(f"/proc/{proc.pid}/status") if line.startswith("Uid:"))
    proc.stdin.close()
    proc.wait()
    print(uids.split()[1:] == [str(os.getuid())] * 4)
    """
    result = run(box, code)
    assert result.status == "ok", result
    assert result.stdout == "True\n"
    assert_next_job_works(box)
    record(box, "setuid-root `su`", "runs as the job's uid (no_new_privs)")


def test_huge_argv_and_env(box: Sandbox) -> None:
    args = tuple(f"{i:04d}" + "a" * 996 for i in range(1000))  # 1 MB of arguments
    code = """
    import errno, subprocess, sys
    def spawn(argv, env=None):
        try:
            subprocess.run(argv, env=env, check=True)
            return "ran"
        except OSError as exc:
            return errno.errorcode[exc.errno]
    print(len(sys.argv) - 1, sum(map(len, sys.argv[1:])), sys.argv[1000][:4],
          spawn(["/bin/true", "x" * 200_000]),
          spawn(["/bin/true"] + ["y" * 100_000] * 100),
          spawn(["/bin/true"], {"HUGE": "z" * 200_000}))
    """
    result = run(box, code, args=args)
    assert result.status == "ok", result
    assert result.stdout == "1000 1000000 0999 E2BIG E2BIG E2BIG\n"
    assert_next_job_works(box)
    record(box, "1 MB of argv; 200 KB argument, 10 MB argv, 200 KB env to exec", "E2BIG")


def test_kill_minus_one_hits_only_the_job(box: Sandbox) -> None:
    before = box.replacements
    code = """
    import os, signal, time
    if os.fork() == 0:
        time.sleep(30)
        os._exit(0)
    os.kill(-1, signal.SIGKILL)
    print(os.wait()[1])
    """
    result = run(box, code)
    assert result.status == "ok", result
    assert result.stdout == "9\n"  # its own child died; the job and the server did not
    for _ in range(2):
        assert_next_job_works(box)
    assert box.replacements == before
    record(box, "`kill(-1, SIGKILL)`", "kills the job's own children only, worker kept")


def test_udp_raw_and_netlink_sockets(box: Sandbox) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    code = f"""
    import errno, socket
    def attempt(make):
        try:
            make()
            return "ok"
        except OSError as exc:
            return errno.errorcode[exc.errno]
    def udp():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"hello", ("127.0.0.1", {port}))
    print(attempt(udp),
          attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
          attempt(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW)),
          [name for _, name in socket.if_nameindex()])
    """
    try:
        result = run(box, code)
        with pytest.raises(TimeoutError):
            listener.recvfrom(64)
    finally:
        listener.close()
    assert result.status == "ok", result
    # UDP "succeeds" into the sandbox's own loopback; nothing reaches the host's.
    assert result.stdout == "ok EPERM EPERM ['lo']\n"
    assert_next_job_works(box)
    record(box, "UDP to a host port; raw and packet sockets; interfaces", "not received; EPERM; lo")
