"""One repository snapshot for many remote agents that run at the same time (a workflow's agents).

Without sharing, every remote agent costs the caller a snapshot of the repository (about eight git
commands and a bundle of the whole history) and the cluster a copy of that bundle. Agents whose
``SpawnRequest.repository_share`` is the same (a workflow's run id) instead share one: the first of
them makes it, the others that start while any of them runs reuse it, and the last one to end drops
its ref. The bundle is put in Ray's object store once (``put``), so a node fetches it once, not once
per agent. No Ray import here: ``put`` is given by the executor.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catui.subagents.executors.repo_bundle import RepoSnapshot, drop_snapshot_ref, snapshot_repository


@dataclass
class SharedSnapshot:
    """A snapshot (None outside git) with its bundle in the object store, and how many agents use it."""

    making: asyncio.Future[tuple[RepoSnapshot | None, Any]]
    users: int = 0


class SharedSnapshots:
    """Snapshots by (share key, folder), made once while in use."""

    def __init__(self, put: Callable[[bytes], Any]) -> None:
        self._put = put
        self._entries: dict[tuple[str, Path], SharedSnapshot] = {}

    async def take(self, share: str, source: Path) -> tuple[RepoSnapshot | None, Any]:
        """The snapshot of ``source`` for one more agent of ``share``, and its bundle's object reference.

        Each successful call is paired with :meth:`give_back`. Raises what making the snapshot raised.
        """
        key = (share, source)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = SharedSnapshot(asyncio.ensure_future(self._make(share, source)))
        entry.users += 1
        try:
            return await asyncio.shield(entry.making)
        except BaseException:
            await self.give_back(share, source)
            raise

    async def _make(self, share: str, source: Path) -> tuple[RepoSnapshot | None, Any]:
        # The ref is named after the share, so it is made and dropped once however many agents use it.
        snapshot = await asyncio.to_thread(snapshot_repository, source, share)
        return snapshot, (self._put(snapshot.bundle) if snapshot is not None else None)

    async def give_back(self, share: str, source: Path) -> None:
        """One agent of ``share`` no longer needs the snapshot; the last one drops its ref."""
        key = (share, source)
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.users -= 1
        if entry.users > 0:
            return
        del self._entries[key]
        if entry.making.done() and not entry.making.cancelled() and entry.making.exception() is None:
            snapshot, _ = entry.making.result()
            if snapshot is not None:
                await asyncio.to_thread(drop_snapshot_ref, snapshot)
        else:
            entry.making.cancel()
            with contextlib.suppress(BaseException):
                await entry.making
