"""Hostile code against each backend: every attack is contained and the next job works."""

from __future__ import annotations

import ast
import socket
import threading
import uuid
from pathlib import Path

from sandbox_probes import assert_next_job_works, outcome, record, run

from generators.sandbox import Limits, Sandbox


def test_infinite_loop_times_out(box: Sandbox) -> None:
    result = run(box, "while True:\n    pass\n", limits=Limits(wall_s=3, cpu_s=1))
    assert result.status == "timeout", result
    # Which limit comes first depends on how busy the machine's cores are.
    assert result.detail.startswith(("cpu limit: ", "wall-clock limit: ")), result
    assert_next_job_works(box)
    record(box, "infinite loop (`while True: pass`, 1 CPU-s)", outcome(result))


def test_sleeping_forever_hits_the_wall_clock(box: Sandbox) -> None:
    result = run(box, "import time\ntime.sleep(600)\n", limits=Limits(wall_s=1, cpu_s=5))
    assert result.status == "timeout", result
    assert result.detail == "wall-clock limit: 1 s", result
    assert_next_job_works(box)
    record(box, "`time.sleep(600)` (1 s wall clock)", outcome(result))


def test_ten_gigabyte_allocation_is_refused(box: Sandbox) -> None:
    result = run(box, "x = bytearray(10 * 1024 ** 3)\nprint(len(x))\n")
    assert result.status == "oom", result
    assert result.stdout == ""
    assert_next_job_works(box)
    record(box, "10 GB allocation", outcome(result))


def test_gradual_allocation_is_stopped(box: Sandbox) -> None:
    code = """
    chunks = []
    while True:
        chunks.append(bytearray(16 * 1024 * 1024))
    """
    result = run(box, code)
    assert result.status == "oom", result
    assert_next_job_works(box)


def test_fork_bomb_is_capped_and_cleaned_up(box: Sandbox) -> None:
    code = """
    import os, time
    started = 0
    for _ in range(500):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        started += 1
    print(started)
    """
    result = run(box, code)
    assert result.status == "ok", result
    started = int(result.stdout)
    assert 0 < started <= box.limits.processes
    bomb = """
    import os
    while True:
        try:
            os.fork()
        except OSError:
            pass
    """
    result = run(box, bomb, limits=Limits(wall_s=2, cpu_s=2, processes=16))
    assert result.status in ("timeout", "killed"), result
    assert_next_job_works(box)
    record(box, "fork bomb (16 processes allowed)", f"{started} forks, then {outcome(result)}")


def test_writes_outside_tmp_fail_and_tmp_is_private(box: Sandbox, tmp_path: Path) -> None:
    host_dir = tmp_path / "host-visible"
    host_dir.mkdir()
    targets = [
        "/etc/passwd",
        "/usr/lib/podium-was-here",
        "/podium-was-here",
        "/opt/podium-was-here",
        "/opt/podium/forkserver.py",
        str(host_dir / "written"),
    ]
    code = f"""
    written = []
    for path in {targets!r}:
        try:
            with open(path, "a") as fh:
                fh.write("pwned")
            written.append(path)
        except OSError:
            pass
    with open("/tmp/marker", "w") as fh:
        fh.write("from the previous job")
    print(written)
    """
    result = run(box, code)
    assert result.status == "ok", result
    assert result.stdout == "[]\n"
    assert list(host_dir.iterdir()) == []
    assert not Path("/podium-was-here").exists()
    assert_next_job_works(box)  # it also checks /tmp is empty again
    record(box, "writes outside /tmp (/etc, /usr, /, the server, a host dir)", "all refused")


def test_host_secret_is_not_readable(box: Sandbox, tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    secret = tmp_path / "secret.txt"
    secret.write_text(token)
    code = f"""
    import os
    found = []
    for path in [{str(secret)!r}, "/root/.bash_history", "/etc/shadow"]:
        try:
            found.append(open(path).read())
        except OSError as exc:
            found.append(type(exc).__name__)
    print(found)
    print(sorted(os.environ))
    """
    result = run(box, code)
    assert result.status == "ok", result
    assert token not in result.stdout
    assert "FileNotFoundError" in result.stdout or "PermissionError" in result.stdout
    assert_next_job_works(box)
    record(box, "reading host files (a secret, /root, /etc/shadow)", "not found / denied")


def test_no_network_to_a_host_listener(box: Sandbox) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    host_ip = socket.gethostbyname(socket.gethostname())
    code = f"""
    import socket
    outcomes = []
    for host in ("127.0.0.1", {host_ip!r}, "localhost"):
        try:
            socket.create_connection((host, {port}), timeout=2).close()
            outcomes.append("connected")
        except OSError as exc:
            outcomes.append(type(exc).__name__)
    print(outcomes)
    """
    try:
        result = run(box, code)
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
    assert result.status == "ok", result
    assert "connected" not in result.stdout
    assert accepted == []
    assert_next_job_works(box)
    record(box, "TCP to a host listener (loopback, host IP)", "no route / refused")


def test_flood_of_stdout_is_capped(box: Sandbox) -> None:
    result = run(box, "import sys\nsys.stdout.write('x' * 100_000_000)\n")
    assert result.status == "output_limit", result
    assert len(result.stdout) <= box.limits.output_bytes
    assert result.truncated
    flood = f"{outcome(result)}, {len(result.stdout):,} chars kept"
    result = run(box, "while True:\n    print('y' * 1000)\n")
    assert result.status == "output_limit", result
    assert_next_job_works(box)
    record(box, "100 MB to stdout", flood)


def test_killing_pid_one_does_not_kill_the_worker(box: Sandbox) -> None:
    before = box.replacements
    result = run(box, "import os, signal\nos.kill(1, signal.SIGKILL)\nprint('still here')\n")
    assert result.status in ("ok", "error"), result
    for _ in range(3):  # both workers, whichever ran the kill
        assert_next_job_works(box)
    assert box.replacements == before
    record(box, "`kill(1, SIGKILL)`", f"{outcome(result)}, worker kept")


def test_double_forked_daemon_is_gone_afterwards(box: Sandbox) -> None:
    code = """
    import os, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                with open("/tmp/daemon-alive", "w") as fh:
                    fh.write(str(time.time()))
                time.sleep(0.01)
        os._exit(0)
    time.sleep(0.2)
    print(os.path.exists("/tmp/daemon-alive"))
    """
    result = run(box, code)
    assert result.stdout == "True\n"
    for _ in range(3):
        assert_next_job_works(box)
    record(box, "double-forked `setsid` daemon", "gone before the next run")


def test_kernel_attack_surface_is_closed(box: Sandbox) -> None:
    code = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWUSER = 0x10000000
    print(libc.unshare(CLONE_NEWUSER), libc.ptrace(16, 1, 0, 0),
          libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
    status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines())
    uid = status["Uid"].split()[0]
    print(status["Seccomp"], status["NoNewPrivs"], status["CapEff"], uid != "0")
    """
    result = run(box, code)
    assert result.status == "ok", result
    assert result.stdout == "-1 -1 -1\n2 1 0000000000000000 True\n"
    assert_next_job_works(box)


def test_memory_limit_is_per_call(box: Sandbox) -> None:
    """A call may ask for more memory than the pool's default, and gets exactly that."""
    code = "x = bytearray(400 * 1024 * 1024)\nx[::4096] = b'1' * len(x[::4096])\nprint(len(x))\n"
    assert box.limits.memory_mb < 400
    assert run(box, code).status == "oom"
    roomy = Limits(wall_s=10, cpu_s=10, memory_mb=700, processes=16, output_bytes=200_000)
    result = run(box, code, limits=roomy)
    assert result.status == "ok", result
    assert result.stdout == f"{400 * 1024 * 1024}\n"
    assert run(box, code).status == "oom"  # and the default applies again afterwards
    assert_next_job_works(box)


def test_no_state_survives_in_shm_or_sysv_ipc(box: Sandbox) -> None:
    leave = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_CREAT = 0o1000
    print(libc.shmget(0, 4096, IPC_CREAT | 0o666) >= 0, libc.msgget(0, IPC_CREAT | 0o666) >= 0)
    open("/dev/shm/left-behind", "w").write("state")
    """
    assert run(box, leave).stdout == "True True\n"
    for _ in range(3):  # whichever worker ran it
        look = """
        import os
        ipc = [len(open(f"/proc/sysvipc/{k}").read().splitlines()) - 1 for k in ("shm", "msg")]
        print(ipc, os.listdir("/dev/shm"))
        """
        result = run(box, look)
        assert result.stdout == "[0, 0] []\n", result


def test_multiprocessing_works_inside(box: Sandbox) -> None:
    code = """
    from multiprocessing import Pool
    if __name__ == "__main__":
        with Pool(2) as pool:
            print(pool.map(abs, [-1, -2, 3]))
    """
    result = run(box, code)
    assert result.status == "ok", result
    assert result.stdout == "[1, 2, 3]\n"
    assert_next_job_works(box)


def test_memory_of_the_whole_process_tree_is_bounded(box: Sandbox) -> None:
    """Four children of 150 MB each fit under a per-process limit of 256 MB, but not
    under the tree's: the cgroup (local) or the container (docker) stops some of them."""
    code = """
    import os, time
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                x = bytearray(150 * 1024 * 1024)
                x[::4096] = b"1" * len(x[::4096])
                time.sleep(1)
                os._exit(0)
            except MemoryError:
                os._exit(3)
        pids.append(pid)
    print(sorted(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids))
    """
    result = run(box, code, limits=Limits(wall_s=20, cpu_s=10, memory_mb=256, processes=16))
    assert result.status == "ok", result
    codes = ast.literal_eval(result.stdout)
    assert codes.count(0) < 4 and set(codes) <= {0, 3, -9}, codes
    assert_next_job_works(box)
