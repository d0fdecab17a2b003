"""The shapes of the dicts the SDK returns and takes, as TypedDicts named as in claude-agent-sdk.

They describe what catui fills: ``CatuiClient.get_mcp_status()`` returns a
:class:`McpStatusResponse`, ``get_context_usage()`` a :class:`ContextUsageResponse`,
an init message's ``data`` is a :class:`SystemInitData`, ``ResultMessage.model_usage``
maps model ids to :class:`ModelUsage`. Keys claude-agent-sdk has and catui
does not fill are left out rather than promised.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

McpServerConnectionStatus = Literal["connected", "failed", "needs-auth", "pending", "disabled"]
ServerToolName = Literal[
    "advisor", "web_search", "web_fetch", "code_execution", "bash_code_execution",
    "text_editor_code_execution", "tool_search_tool_regex", "tool_search_tool_bm25",
]
MessageOriginKind = Literal[
    "human", "channel", "peer", "task-notification", "coordinator", "unclassified", "observer",
    "auto-continuation", "observer-activity",
]
"""catui sets ``human`` (a host's stamp, echoed) and ``task-notification`` (a background task's turn)."""
TaskNotificationOriginSubkind = Literal["scheduled-trigger", "peer-send-message"]
RateLimitType = Literal["five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "overage"]


class McpToolAnnotations(TypedDict, total=False):
    """An MCP tool's hints (camelCase, as on the wire)."""

    readOnly: bool
    destructive: bool
    openWorld: bool


class McpToolInfo(TypedDict):
    """One tool of an MCP server in :class:`McpServerStatus`."""

    name: str
    description: NotRequired[str]
    annotations: NotRequired[McpToolAnnotations]


class McpServerInfo(TypedDict):
    """What a server said about itself when it connected."""

    name: str
    version: str


class McpServerStatus(TypedDict):
    """One server of ``get_mcp_status()``: configured (stdio/http) or in-process (``create_sdk_mcp_server``)."""

    name: str
    status: McpServerConnectionStatus
    error: NotRequired[str]
    tools: NotRequired[list[McpToolInfo]]


class McpStatusResponse(TypedDict):
    """What ``CatuiClient.get_mcp_status()`` returns."""

    mcpServers: list[McpServerStatus]


class ContextUsageCategory(TypedDict):
    """One slice of the context window in :class:`ContextUsageResponse`."""

    name: str
    tokens: int
    color: str
    kind: str
    """``used`` or ``free``."""


class ContextUsageResponse(TypedDict):
    """What ``CatuiClient.get_context_usage()`` returns: Claude Code's shape, with what catui can tell
    (``memoryFiles``, ``mcpTools`` and ``agents`` are empty: catui does not break the context down by them)."""

    categories: list[ContextUsageCategory]
    totalTokens: int
    maxTokens: int
    rawMaxTokens: int
    percentage: float
    model: str
    gridRows: list[list[dict[str, Any]]]
    isAutoCompactEnabled: bool
    memoryFiles: list[dict[str, Any]]
    mcpTools: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    apiUsage: dict[str, int] | None


class SystemInitMcpServer(TypedDict):
    """An MCP server listed in the init message."""

    name: str
    status: str


class SystemInitPlugin(TypedDict):
    """A plugin listed in the init message."""

    name: str
    path: str


class SystemInitData(TypedDict):
    """The ``data`` of a ``system``/``init`` message, as catui fills it."""

    type: Literal["system"]
    subtype: Literal["init"]
    cwd: str
    session_id: str
    tools: list[str]
    mcp_servers: list[SystemInitMcpServer]
    model: str
    permissionMode: str
    slash_commands: list[str]
    skills: list[str]
    plugins: list[SystemInitPlugin]
    agents: list[str]
    output_style: str
    warnings: list[str]


class ModelUsage(TypedDict):
    """One model's totals in ``ResultMessage.model_usage`` (camelCase, as Claude Code's ``modelUsage``)."""

    inputTokens: int
    outputTokens: int
    cacheReadInputTokens: int
    cacheCreationInputTokens: int
    webSearchRequests: int
    costUSD: float
    contextWindow: int
    maxOutputTokens: int


class ThinkingConfigAdaptive(TypedDict):
    """The model decides when and how much to think."""

    type: Literal["adaptive"]


class ThinkingConfigEnabled(TypedDict):
    """A fixed thinking budget."""

    type: Literal["enabled"]
    budget_tokens: int


class ThinkingConfigDisabled(TypedDict):
    """No extended thinking."""

    type: Literal["disabled"]


class SandboxNetworkConfig(TypedDict, total=False):
    """The ``network`` part of the ``sandbox`` option (docs/sandbox.md lists what catui applies)."""

    allowedDomains: list[str]
    allowUnixSockets: list[str]
    allowAllUnixSockets: bool
    allowLocalBinding: bool


class SandboxSettings(TypedDict, total=False):
    """The ``sandbox`` option: the ``sandbox`` setting's shape (docs/sandbox.md)."""

    enabled: bool
    autoAllowBashIfSandboxed: bool
    excludedCommands: list[str]
    allowUnsandboxedCommands: bool
    network: SandboxNetworkConfig
