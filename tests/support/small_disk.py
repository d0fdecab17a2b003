"""Full and read-only disks for attack tests: a small tmpfs mounted on a test folder (root only).

A test that needs one is skipped, with the kernel's reason, only where mounting
is refused (no root, no mount namespace); CI runs as root.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_tmpfs(folder: Path, size_bytes: int, *, read_only: bool = False) -> Iterator[Path]:
    """``folder`` (created) backed by a tmpfs of ``size_bytes`` for the duration; unmounted afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    options = f"size={size_bytes}" + (",ro" if read_only else "")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (the kernel refused: {done.stderr.strip()})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path, leave_bytes: int) -> Path:
    """Fill the file system of ``folder`` so that about ``leave_bytes`` stay free; the filler's path."""
    filler = folder / ".filler"
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    with filler.open("ab") as out:
        out.write(b"\0" * max(free - leave_bytes, 0))
    return filler


def remount_read_only(folder: Path) -> None:
    """Make the tmpfs at ``folder`` read-only (what a full or failing disk often turns into)."""
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True, capture_output=True)
