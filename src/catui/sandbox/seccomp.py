"""A seccomp filter that keeps a sandboxed command from opening unix sockets (and io_uring, which could open them).

A unix socket on the filesystem is reached by its path, and ``connect`` needs no write access to the mount it
lives on: the read-only root leaves every server socket of the host in reach — the Docker daemon, the systemd
user bus (``systemd-run --user`` starts anything), ssh-agent, a database — and each can run or write things
outside the sandbox. A new network namespace does not help (it scopes only *abstract* unix sockets). So, as
Claude Code does on Linux unless ``allowAllUnixSockets`` is set, a sandboxed command may not create an
``AF_UNIX`` socket at all: ``socket(AF_UNIX, …)`` fails with ``EPERM``. ``socketpair`` stays allowed (a pair
reaches nothing outside), and so do inet sockets (the network namespace governs those).

``io_uring_setup`` is refused too, because io_uring can create sockets without the ``socket`` system call.

The program is classic BPF for ``seccomp(SECCOMP_SET_MODE_FILTER)``, built here by hand (no libseccomp):
bwrap loads it from a file descriptor (``--seccomp FD``); the allow-list bridge, which needs a unix socket
itself, installs it in the command's process before it executes the command (``bridge.py``).
"""

from __future__ import annotations

import contextlib
import os
import platform
import struct
from collections.abc import Iterator
from functools import cache

AF_UNIX = 1
SYS_SOCKET = 1  # socketcall's first argument for socket()
_EPERM = 1
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
# Instruction classes and modes (linux/filter.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_RET_K = 0x06
# struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low 32 bits first: every arch below is little-endian).
_NR, _ARCH, _ARG0 = 0, 4, 16
_X32_BIT = 0x40000000


# arch (AUDIT_ARCH_*) -> (numbers of socket(), of io_uring_setup(), of socketcall() or None)
_ARCHES: dict[int, tuple[tuple[int, ...], tuple[int, ...], int | None]] = {
    0xC000003E: ((41, 41 | _X32_BIT), (425, 425 | _X32_BIT), None),  # x86_64 (and its x32 ABI)
    0x40000003: ((359,), (425,), 102),  # i386 programs on an x86_64 kernel
    0xC00000B7: ((198,), (425,), None),  # aarch64
    0x40000028: ((281,), (425,), None),  # 32-bit arm on aarch64
    0xC00000F3: ((198,), (425,), None),  # riscv64
}
# platform.machine() values whose kernels take the arches above.
SUPPORTED_MACHINES = ("x86_64", "amd64", "aarch64", "arm64", "riscv64")


def supported(machine: str | None = None) -> bool:
    """Whether the filter covers this machine's system calls (elsewhere unix sockets stay open: docs/sandbox.md)."""
    return (machine or platform.machine()).lower() in SUPPORTED_MACHINES


@cache
def unix_socket_filter() -> bytes:
    """The compiled program: ``socket(AF_UNIX, …)``, a socketcall ``socket`` and ``io_uring_setup`` fail with EPERM."""
    code: list[tuple[int, int | str, int | str, int]] = []  # (opcode, jump-true, jump-false, k); jumps may be labels
    labels: dict[str, int] = {}
    code.append((_LD_W_ABS, 0, 0, _ARCH))
    for arch in _ARCHES:
        code.append((_JEQ_K, f"arch{arch}", 0, arch))
    code.append((_RET_K, 0, 0, _RET_ALLOW))  # an arch not listed: nothing to check
    for arch, (sockets, io_uring, socketcall) in _ARCHES.items():
        labels[f"arch{arch}"] = len(code)
        code.append((_LD_W_ABS, 0, 0, _NR))
        for number in sockets:
            code.append((_JEQ_K, "family", 0, number))
        for number in io_uring:
            code.append((_JEQ_K, "deny", 0, number))
        if socketcall is not None:
            # socketcall passes socket()'s arguments in memory, out of a filter's reach: its socket() is refused whole.
            code.append((_JEQ_K, 0, "allow", socketcall))
            code.append((_LD_W_ABS, 0, 0, _ARG0))
            code.append((_JEQ_K, "deny", "allow", SYS_SOCKET))
        else:
            code.append((_RET_K, 0, 0, _RET_ALLOW))
    labels["family"] = len(code)
    code.append((_LD_W_ABS, 0, 0, _ARG0))
    code.append((_JEQ_K, "deny", "allow", AF_UNIX))
    labels["allow"] = len(code)
    code.append((_RET_K, 0, 0, _RET_ALLOW))
    labels["deny"] = len(code)
    code.append((_RET_K, 0, 0, _RET_ERRNO | _EPERM))

    def offset(here: int, target: int | str) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - here - 1
        assert 0 <= jump < 256, "a BPF jump reaches at most 255 instructions ahead"
        return jump

    return b"".join(
        struct.pack("=HBBI", op, offset(i, jt), offset(i, jf), k) for i, (op, jt, jf, k) in enumerate(code)
    )


@contextlib.contextmanager
def program_fd(program: bytes) -> Iterator[int]:
    """A file descriptor to read ``program`` from (bwrap's ``--seccomp FD``), open while the block runs."""
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(write_end, "wb") as out:  # a few hundred bytes: the pipe's buffer holds them all
            out.write(program)
        yield read_end
    finally:
        os.close(read_end)
