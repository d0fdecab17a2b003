"""Running a search in a child process with bounded output, a time limit and an abort.

Both Grep backends run here: ``rg``, and the pure-Python search
(:mod:`catui.tools.python_search_worker`) in its own Python process. The
pure-Python search cannot run in a thread of catui: Python's ``re`` holds the
interpreter lock for the whole of a match, so a pattern with catastrophic
backtracking (``(a+)+$`` on a long line of ``a``) would freeze catui, its
signal handlers (SIGINT, SIGTERM) included. A child can be killed.

Output is read as it comes and kept up to :data:`MAX_OUTPUT_BYTES`; past that
the child is stopped and the caller gets what came so far with ``cut`` set, so
a search matching gigabytes costs a bounded amount of memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MAX_OUTPUT_BYTES = 32 * 1024 * 1024
"""The most search output held; Grep shows far less (head_limit, 20,000 characters)."""

DEFAULT_TIMEOUT_S = 120.0
TIMEOUT_ENV = "CATUI_GREP_TIMEOUT_MS"


class SearchInterrupted(Exception):
    """The search was stopped: ``reason`` is "aborted" or "timeout"."""

    def __init__(self, reason: str, seconds: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.seconds = seconds


@dataclass
class ProcessOutput:
    stdout: bytes
    stderr: bytes
    returncode: int | None
    cut: bool = False
    """True when the output passed MAX_OUTPUT_BYTES and the child was stopped early (stdout ends at a separator)."""


def search_timeout(env: Mapping[str, str] | None = None) -> float:
    """The time limit of one search: ``CATUI_GREP_TIMEOUT_MS`` (settings' ``env`` first, then the process's)
    when set to a positive number, else 120 s."""
    raw = ((env or {}).get(TIMEOUT_ENV) or os.environ.get(TIMEOUT_ENV, "")).strip()
    try:
        value = float(raw) / 1000.0
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


async def run_search_process(
    args: list[str], *, cwd: str, stdin: bytes | None = None, abort: asyncio.Event | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S, max_output: int = MAX_OUTPUT_BYTES, cpu_limit_s: int | None = None,
    separator: bytes = b"\n",
) -> ProcessOutput:
    """Run ``args``; its stdout up to ``max_output`` bytes. Raises SearchInterrupted on abort or timeout.

    ``cpu_limit_s`` also caps the child's CPU time with RLIMIT_CPU: should catui itself die (kill -9), the
    child still ends. A cut output ends after the last ``separator`` (whole records only).
    """
    proc = await asyncio.create_subprocess_exec(
        *args, cwd=cwd, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=_cpu_limiter(cpu_limit_s) if cpu_limit_s else None,
    )
    reading = asyncio.ensure_future(_collect(proc, stdin, max_output, separator))
    waiters: set[asyncio.Future[object]] = {reading}  # type: ignore[arg-type]
    aborter = asyncio.ensure_future(abort.wait()) if abort is not None else None
    if aborter is not None:
        waiters.add(aborter)  # type: ignore[arg-type]
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        _stop(proc)
        reading.cancel()
        raise
    finally:
        if aborter is not None:
            aborter.cancel()
    if reading not in done:
        _stop(proc)
        reading.cancel()
        with contextlib.suppress(BaseException):
            await reading
        await proc.wait()
        raise SearchInterrupted("aborted" if aborter is not None and aborter in done else "timeout", timeout_s)
    return reading.result()


async def _collect(proc: asyncio.subprocess.Process, stdin: bytes | None, max_output: int,
                   separator: bytes) -> ProcessOutput:
    assert proc.stdout is not None and proc.stderr is not None
    if stdin is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        proc.stdin.close()
    errors = asyncio.ensure_future(_drain(proc.stderr, 64 * 1024))
    held = bytearray()
    cut = False
    while chunk := await proc.stdout.read(256 * 1024):
        held += chunk
        if len(held) > max_output:
            cut = True
            _stop(proc)
            del held[held.rfind(separator, 0, max_output) + 1:]  # whole records only
            break
    await proc.wait()
    return ProcessOutput(bytes(held), await errors, proc.returncode, cut)


async def _drain(stream: asyncio.StreamReader, keep: int) -> bytes:
    """Read ``stream`` to its end (so the child never blocks on a full pipe), keeping the first ``keep`` bytes."""
    kept = bytearray()
    while chunk := await stream.read(64 * 1024):
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]
    return bytes(kept)


def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGKILL)


def _cpu_limiter(seconds: int) -> Callable[[], None]:
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))

    return limit
