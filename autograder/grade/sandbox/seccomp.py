"""The seccomp filter bwrap installs: an allow-list built with libseccomp.

Every system call CPython, numpy, torch (CPU) and threads need is allowed, those that
could change another process (limits, priority, CPU set) only on the calling one, no
socket call at all (docs/sandbox.md, "Recycling"); every other one fails with EPERM, so
an odd call in student code is an ordinary ``PermissionError``, not a mystery crash.
Calls of a foreign ABI on the same machine (32-bit ``int 0x80`` or x32 on x86_64)
kill the process: libseccomp's bad-architecture action.

The program is built by libseccomp (through ``pyseccomp``, ctypes over the system
``libseccomp.so.2``) for the machine's native architecture, or any other one it knows,
and exported as the raw BPF that ``bwrap --seccomp FD`` loads.
"""

from __future__ import annotations

import errno
import functools
import tempfile

# What stays allowed. Grouped by purpose; names unknown on an architecture are skipped
# (e.g. ``open`` does not exist on aarch64, only ``openat``).
ALLOWED_SYSCALLS = (
    # process life cycle, threads, waiting
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "fork",
    "vfork",
    "clone",
    "clone3",
    "wait4",
    "waitid",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "futex",
    "futex_waitv",
    "arch_prctl",
    "prctl",
    "getpid",
    "getppid",
    "gettid",
    "getpgid",
    "getpgrp",
    "setpgid",
    "getsid",
    "setsid",
    "pidfd_open",
    "pidfd_send_signal",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "capget",
    "uname",
    "sysinfo",
    "getcpu",
    "personality",
    "restart_syscall",
    "pause",
    # signals and timers
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "sigaltstack",
    "kill",
    "tkill",
    "tgkill",
    "alarm",
    "getitimer",
    "setitimer",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "signalfd",
    "signalfd4",
    # time and scheduling
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "gettimeofday",
    "time",
    "nanosleep",
    "times",
    "getrusage",
    "sched_yield",
    "sched_getaffinity",
    "sched_getparam",
    "sched_getscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_rr_get_interval",
    "sched_getattr",
    "getpriority",
    "getrlimit",
    "setrlimit",
    "ugetrlimit",
    "membarrier",
    # memory
    "brk",
    "mmap",
    "mmap2",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "msync",
    "mincore",
    "mlock",
    "munlock",
    "get_mempolicy",
    "set_mempolicy",
    "mbind",
    "memfd_create",
    "pkey_alloc",
    "pkey_free",
    "pkey_mprotect",
    # files and directories (all confined by the mount namespace)
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "lseek",
    "_llseek",
    "sendfile",
    "sendfile64",
    "copy_file_range",
    "splice",
    "tee",
    "stat",
    "lstat",
    "fstat",
    "newfstatat",
    "fstatat64",
    "stat64",
    "lstat64",
    "fstat64",
    "statx",
    "statfs",
    "fstatfs",
    "statfs64",
    "fstatfs64",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "umask",
    "truncate",
    "ftruncate",
    "truncate64",
    "ftruncate64",
    "fallocate",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "flock",
    "fadvise64",
    "fadvise64_64",
    "readahead",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "fcntl64",
    "ioctl",
    "pipe",
    "pipe2",
    "eventfd",
    "eventfd2",
    # waiting for I/O
    "select",
    "_newselect",
    "pselect6",
    "poll",
    "ppoll",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    # randomness
    "getrandom",
)

# Allowed only with these argument values (each tuple is one rule: every (argument
# index, value) in it must hold; several rules for one call are alternatives). A call
# that would change another process's limits, priority or CPU set fails with EPERM: in
# a recycled sandbox the zygote runs as the same uid, and what a submission changed
# there every later submission would inherit (docs/sandbox.md, "Recycling").
PRIO_PROCESS = 0
CONDITIONAL_SYSCALLS = {
    # glibc's getrlimit/setrlimit use prlimit64(0, ...); reading another's (new == NULL) is harmless
    "prlimit64": (((0, 0),), ((2, 0),)),
    "setpriority": (((0, PRIO_PROCESS), (1, 0)),),  # os.nice / setpriority of the caller only
    "sched_setaffinity": (((0, 0),),),  # the calling thread only
    "get_robust_list": (((0, 0),),),
}

# Denied on purpose, though CPython's socket module wraps them: grading uses no socket.
# Without socket() and socketpair() there is no network, no abstract unix socket (a
# channel between submissions of a recycled sandbox) and no SCM_RIGHTS message, which
# could keep files and memfds alive in a garbage cycle that no process owns.
DENIED_SOCKET_SYSCALLS = (
    "socket",
    "socketpair",
    "bind",
    "connect",
    "listen",
    "accept",
    "accept4",
    "getsockname",
    "getpeername",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    "setsockopt",
    "getsockopt",
    "socketcall",
)


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) is missing or does not know the architecture."""


def _binding():
    try:
        import pyseccomp  # optional: without it SeccompUnavailable says why
    except (ImportError, RuntimeError, OSError) as exc:  # RuntimeError: no libseccomp.so
        raise SeccompUnavailable(f"pyseccomp/libseccomp unavailable: {exc}") from None
    return pyseccomp


def _arch_token(seccomp, arch: str | None) -> int:
    if arch is None:
        return seccomp.system_arch()
    token = getattr(seccomp.Arch, arch.upper(), None)
    if token is None:
        raise SeccompUnavailable(f"libseccomp does not know the architecture {arch!r}")
    return token


@functools.lru_cache(maxsize=8)
def seccomp_program(arch: str | None = None) -> bytes:
    """The filter as raw BPF (a ``struct sock_filter`` array) for ``arch`` (a libseccomp
    name such as "x86_64" or "aarch64"; default: this machine). Raises
    :class:`SeccompUnavailable` when libseccomp cannot build it."""
    seccomp = _binding()
    token = _arch_token(seccomp, arch)
    try:
        rules = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))
        # The whole process, not only the calling thread: a half-dead process with
        # torch's threads still running would hang instead of exiting.
        rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
        if token != seccomp.system_arch():
            rules.add_arch(token)
            rules.remove_arch(seccomp.system_arch())
        _add_rules(seccomp, rules, token)
        with tempfile.TemporaryFile() as out:
            rules.export_bpf(out)
            out.seek(0)
            return out.read()
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp could not build the filter: {exc}") from None


def _add_rules(seccomp, rules, token: int) -> None:
    """The allow rules: ALLOWED_SYSCALLS unconditionally, CONDITIONAL_SYSCALLS with
    their argument comparisons (names unknown on the architecture skipped)."""
    for name in ALLOWED_SYSCALLS:
        if seccomp.resolve_syscall(token, name) >= 0:
            rules.add_rule(seccomp.ALLOW, name)
    for name, alternatives in CONDITIONAL_SYSCALLS.items():
        if seccomp.resolve_syscall(token, name) < 0:
            continue
        for conditions in alternatives:
            rules.add_rule(seccomp.ALLOW, name, *(seccomp.Arg(arg, seccomp.EQ, value) for arg, value in conditions))
