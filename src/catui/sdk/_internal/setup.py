"""Setting up a CatuiClient's app: the SDK's checks on top of build_app, and the ``stderr`` callback."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from catui.errors import ConfigurationError

if TYPE_CHECKING:
    from catui.app.services import AgentApp


def check_sdk_agents(app: AgentApp) -> None:
    """Refuse agent definitions from options that did not load (a file's problem is only a warning)."""
    from catui.agents.registry import SDK_ORIGIN

    problems = [f.error for f in app.registry.failed_files if getattr(f, "path", None) == SDK_ORIGIN]
    if problems:
        raise ConfigurationError("CatuiOptions.agents: " + "; ".join(problems))


class StderrLines(logging.Handler):
    """Passes catui's warnings and errors to the SDK's ``stderr`` callback (a raising callback is ignored)."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        try:
            for line in self.format(record).splitlines():
                self.callback(line)
        except Exception:  # claude-agent-sdk isolates the callback too: a logging hook must not end the run
            pass
