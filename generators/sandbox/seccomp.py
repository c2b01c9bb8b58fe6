"""The seccomp filter loaded into every sandbox (bwrap `--seccomp FD` locally; the fork
server installs the same program on itself in a container, on top of Docker's profile).

Namespaces already hide the network and the host's files; this filter removes the
kernel surfaces untrusted code never needs and that sandbox escapes have used: tracing
other processes, mounting, loading kernel code, new namespaces, BPF, perf, keyrings.
New namespaces matter most: in a fresh user namespace a process holds every capability
and reaches kernel code (netfilter, mounts) that is otherwise root-only. So `clone` is
refused when its flags ask for any namespace, and `clone3`, whose flags sit in memory a
filter cannot read, answers ENOSYS so that libc falls back to `clone`. Denied calls fail
with an errno rather than killing the process, so ordinary libraries that probe for a
feature keep working. The filter is compiled by libseccomp (`pyseccomp`).
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import tempfile
from dataclasses import dataclass

DENIED_SYSCALLS: tuple[str, ...] = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "unshare",
    "setns",
    "swapon",
    "swapoff",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "acct",
    "quotactl",
    "iopl",
    "ioperm",
    "open_by_handle_at",
    "name_to_handle_at",
    "syslog",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "lookup_dcookie",
    "vhangup",
    "io_uring_setup",
)


# Flags of clone(2) that create a namespace (CLONE_NEWTIME shares a bit with CSIGNAL's
# range and is only honoured by clone3 and unshare, both refused).
NAMESPACE_FLAGS: dict[str, int] = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# personality(2) bits that weaken the process's own hardening (ASLR, NX, page zero).
PERSONALITY_FLAGS: dict[str, int] = {
    "ADDR_NO_RANDOMIZE": 0x0040000,
    "MMAP_PAGE_ZERO": 0x0100000,
    "ADDR_COMPAT_LAYOUT": 0x0200000,
    "READ_IMPLIES_EXEC": 0x0400000,
}


@dataclass(frozen=True)
class Rule:
    """Fail `syscall` with `errno_value`; with `flag` set, only when that bit is in the
    argument at `arg` (one rule per bit: libseccomp ORs the rules of one syscall)."""

    syscall: str
    errno_value: int = errno.EPERM
    arg: int = 0
    flag: int | None = None


def clone_flags_arg() -> int:
    # s390 swaps clone's first two arguments; every other architecture passes flags first.
    return 1 if platform.machine().startswith("s390") else 0


def rules() -> list[Rule]:
    found = [Rule(name) for name in DENIED_SYSCALLS]
    found.append(Rule("clone3", errno.ENOSYS))
    found += [Rule("clone", arg=clone_flags_arg(), flag=bit) for bit in NAMESPACE_FLAGS.values()]
    found += [Rule("personality", flag=bit) for bit in PERSONALITY_FLAGS.values()]
    return found


@functools.cache
def deny_list_bpf() -> bytes:
    """The compiled BPF program (cached: compiling takes milliseconds, workers restart)."""
    import pyseccomp

    flt = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    for rule in rules():
        args = []
        if rule.flag is not None:
            args.append(pyseccomp.Arg(rule.arg, pyseccomp.MASKED_EQ, rule.flag, rule.flag))
        try:
            flt.add_rule(pyseccomp.ERRNO(rule.errno_value), rule.syscall, *args)
        except (ValueError, RuntimeError, OSError):
            continue  # a syscall this architecture does not have
    with tempfile.TemporaryFile() as fh:
        flt.export_bpf(fh)
        fh.seek(0)
        return fh.read()


def bpf_fd() -> int:
    """A fresh readable descriptor holding the filter, for bwrap to consume once."""
    fd = os.memfd_create("podium-seccomp", 0)
    os.write(fd, deny_list_bpf())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
