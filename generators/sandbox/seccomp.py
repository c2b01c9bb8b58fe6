"""The seccomp deny-list loaded into every local sandbox (bwrap `--seccomp FD`).

Namespaces already hide the network and the host's files; this filter removes the
kernel surfaces untrusted code never needs and that sandbox escapes have used: tracing
other processes, mounting, loading kernel code, new namespaces, BPF, perf, keyrings.
Denied calls fail with EPERM rather than killing the process, so ordinary libraries that
probe for a feature keep working. The filter is compiled by libseccomp (`pyseccomp`).
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile

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


@functools.cache
def deny_list_bpf() -> bytes:
    """The compiled BPF program (cached: compiling takes milliseconds, workers restart)."""
    import pyseccomp

    flt = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            flt.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
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
