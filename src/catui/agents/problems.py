"""What the loaders report besides definitions: files that failed, and warnings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FailedFile:
    """A definition source that produced no agent, and why (a reason a person can act on)."""

    path: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "error": self.error}


@dataclass(frozen=True)
class AgentWarning:
    """Something odd that did not stop an agent from loading (or a file that was skipped on purpose)."""

    path: str | None
    message: str
    # Also said when a session starts (not only by `catui agents`): a definition was narrowed for safety.
    at_start: bool = False

    def to_dict(self) -> dict[str, str | None]:
        return {"path": self.path, "message": self.message}

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message
