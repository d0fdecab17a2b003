"""catui as a library, with claude-agent-sdk's nouns: the public modules and their names.

- :mod:`.client`: :class:`CatuiClient` (a conversation) and :func:`query` (one prompt);
- :mod:`.types`: the messages, content blocks and permission results the SDK yields and takes;
- :mod:`.options`: :class:`CatuiOptions` and the option types;
- :mod:`.tools`: ``@tool`` and in-process MCP servers (:func:`create_sdk_mcp_server`);
- :mod:`.hooks`: callable hooks (:class:`HookMatcher`) and their inputs and outputs;
- :mod:`.permissions`: ``can_use_tool`` and permission updates in the SDK's shapes;
- :mod:`.sessions` / :mod:`.session_fork`: reading, renaming, tagging and forking stored sessions;
- :mod:`.shapes`: the TypedDicts of status answers; :mod:`.worktrees`: agents' worktrees.

``_internal/`` is the machinery behind the client (its driver, the controls, message conversion); nothing
there is public. The SDK is a front end over :mod:`catui.app`, as the CLI is; it never imports
:mod:`catui.cli`. The names below are loaded on first use, so ``import catui.sdk`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catui.sdk.client import *  # noqa: F403

_CLIENT = "catui.sdk.client"


def __getattr__(name: str) -> Any:
    client = importlib.import_module(_CLIENT)
    if name not in client.__all__:
        raise AttributeError(f"module 'catui.sdk' has no attribute {name!r}")
    value = getattr(client, name)
    globals()[name] = value
    return value
