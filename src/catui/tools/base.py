"""What every tool is built on: the Tool class, its input and result, and the context a call runs in.

The context carries, in :class:`ToolServices`, what higher layers hand down to tools. Tools sit below
sessions, sub-agents, hooks and MCP in the dependency order and never name their classes, not even for the
type checker: what a tool calls on them is declared here as a small protocol (:class:`SubagentSpawner`,
:class:`OutputReviewer`, :class:`AgentConversation`), satisfied by the classes above.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from catui.lazy import lazy_exports
from catui.messages import Block, Message
from catui.permissions.context import PermissionContext, PermissionRequest, PermissionRule
from catui.tools.static_schemas import stored_schema, stored_schema_by_key

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from catui.agents.definition import AgentDefinition
    from catui.sandbox.policy import BashSandbox
    from catui.tasks.model import Task
    from catui.tasks.registry import TaskRegistry
    from catui.tasks.schedule import CronSchedule
    from catui.tools.tool_input import ToolInput as ToolInput

# lazy (catui.lazy): ToolInput imports pydantic; tools name their input model and load it on first validation
__getattr__ = lazy_exports(__name__, {"ToolInput": "catui.tools.tool_input"})

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

CURRENT_TOOL_USE_ID: ContextVar[str | None] = ContextVar("catui_current_tool_use_id", default=None)
"""The id of the tool_use being executed; set by the session per call (calls may run concurrently)."""


@dataclass
class ToolResult:
    """What a tool call returns.

    ``content`` becomes the tool_result block's content (a string or blocks);
    ``data`` is the structured result shown to programs (stream-json's
    ``tool_use_result``, the SDK).
    """

    content: str | list[Block]
    is_error: bool = False
    data: Any = None
    follow_up: list[Block] = field(default_factory=list)
    """Blocks the session puts after the tool_result blocks of the same user message (the Skill tool's
    instructions), in tool_use order."""
    run_rules: tuple[PermissionRule, ...] = ()
    """Allow rules the call grants until the current run (one prompt) ends: a skill's ``allowed-tools``."""
    server_tool_use: dict[str, int] | None = None
    """Server-side tool use the call made for its session (WebSearch's searches), added to the session's
    ``usage.server_tool_use`` (print mode's ``result.usage``)."""


@dataclass
class PlanModeState:
    """An agent's plan-mode bookkeeping (EnterPlanMode / ExitPlanMode and the session's reminder)."""

    mode_before_plan: str | None = None
    """The mode plan mode was entered from; approving the plan returns to it."""
    reminder_sent: bool = False
    """Whether this entry into plan mode has been announced to the model."""
    allowed_prompts: list[dict[str, str]] = field(default_factory=list)
    """The allowedPrompts of approved plans, ``[{"tool", "prompt"}]``."""


@dataclass
class EnteredWorktree:
    """The worktree an agent moved into with EnterWorktree, and where it came from (ExitWorktree goes back)."""

    info: Any
    """The ``catui.worktree.WorktreeInfo`` of the worktree (typed loosely: tools' context stays import-light)."""
    original_cwd: Path
    original_project_root: Path
    original_working_directories: tuple[Path, ...]


class AgentCatalogue(Protocol):
    """The agent definitions an Agent call chooses from (``catui.agents.registry.AgentRegistry``)."""

    version: int
    """Bumped at every reload, so that derived texts (the Agent tool's description) know to rebuild."""
    active: list[AgentDefinition]

    def get(self, name: str) -> AgentDefinition | None:
        """The active agent called ``name`` (or one of its aliases)."""
        ...

    def reload_if_changed(self) -> bool:
        """Reload when a definition file changed since the last look; True if it did."""
        ...


class AgentConversation(Protocol):
    """The session that owns a context (``catui.session.session.Session``), as the layers above tools reach it."""

    @property
    def session_id(self) -> str:
        """The conversation's id."""
        ...

    @property
    def tools(self) -> list[Tool]:
        """The tools it offers now."""
        ...

    @property
    def messages(self) -> list[Message]:
        """The conversation so far."""
        ...


class StoppedAgent(Protocol):
    """A sub-agent run :meth:`SubagentSpawner.stop_foreground` stopped (``catui.subagents.run.SubagentRun``)."""

    @property
    def description(self) -> str: ...


class SubagentSpawner(Protocol):
    """The sub-agent runtime as tools see it (the Agent tool, TaskStop, front ends)."""

    async def spawn(self, request: Any, parent_ctx: ToolContext) -> ToolResult:
        """Run one Agent call to its tool_result (``request`` is a ``catui.subagents.plan.SpawnRequest``)."""
        ...

    def running_in_foreground(self, agent_id: str) -> bool:
        """Whether a sub-agent with this id runs in the foreground now (its parent waits for it)."""
        ...

    def live_agent_id(self, name: str) -> str | None:
        """The id of the live background agent called ``name`` (None: no such agent, or no messaging)."""
        ...

    def foreground_ids(self) -> list[str]:
        """The ids of the sub-agents running in the foreground now."""
        ...

    async def stop_foreground(self, agent_id: str) -> StoppedAgent | None:
        """Stop a foreground sub-agent; returns its run, or None when none runs."""
        ...

    async def background_all_foreground(self, tool_use_id: str | None = None) -> list[str]:
        """Move every foreground sub-agent to the background (Ctrl-B; with ``tool_use_id`` only the one that
        Agent call started); returns the ids moved."""
        ...


class OutputReviewer(Protocol):
    """The deferred handoff review of background agents' output (``catui.subagents.deferred_review``)."""

    async def review_task(self, task_id: str, ctx: ToolContext) -> str | None:
        """Review a finished agent read through TaskOutput if due; its warning, or None."""
        ...

    async def review_file(self, path: Path, ctx: ToolContext) -> str | None:
        """The same for a Read of ``path`` when it is an agent's output file; its warning, or None."""
        ...


class ForegroundShellReport(Protocol):
    """One foreground Bash command being reported (``ShellReports.foreground``)."""

    def ended(self, status: str) -> None:
        """The command ended: ``completed``, ``failed`` (a non-zero exit or its timeout) or ``stopped``."""
        ...


class ShellReports(Protocol):
    """How shell commands are reported in the current contract (``catui.app.shell_reports``)."""

    def launched(self, task: Task, ctx: ToolContext) -> str:
        """Report the shell ``task`` that the agent of ``ctx`` has just started; the tool result's text."""
        ...

    def foreground(self, ctx: ToolContext, description: str) -> ForegroundShellReport:
        """Start reporting a foreground command of the agent of ``ctx`` (announced once it runs long)."""
        ...


@dataclass(frozen=True)
class TeamMembership:
    """Set on a teammate's context: the team it belongs to (spec 12.3's rules read it)."""

    team_name: str
    in_process: bool = True
    member_name: str = ""
    """The teammate's name on the team (its inbox; its agent id is ``<member_name>@<team_name>``)."""


@dataclass
class ToolServices:
    """The objects an agent's tools may use, handed down by the layers above them, shared by an agent and
    its sub-agents.

    ``env`` holds the variables of the settings' ``env`` block and the SDK's
    ``env`` option (Bash commands see them). A child's services are its parent's
    (:meth:`for_child`). Collaborators only some tools use come to those tools by construction
    (the Agent tool's runtime, SendMessage's messaging, the MCP resource tools' manager).
    """

    env: Mapping[str, str] = field(default_factory=dict)
    tasks: TaskRegistry | None = None
    subagents: SubagentSpawner | None = None
    output_review: OutputReviewer | None = None
    """Reviews a background agent's output when it is read in auto mode (None when background agents are off)."""
    sandbox: BashSandbox | None = None
    """Where Bash commands run when the ``sandbox`` setting is on (shared by every agent); None when off."""
    schedule: CronSchedule | None = None
    """The session's scheduled prompts (CronCreate / CronDelete / CronList), shared with its sub-agents."""
    shell_reports: ShellReports | None = None
    """The current contract's reports of background shells (their events, texts and notifications); None in
    the 2.1.92 profile, whose Bash keeps catui's own texts and tells nobody when a shell ends."""

    def for_child(self) -> ToolServices:
        """A copy for a child agent's context."""
        return dataclasses.replace(self)


@dataclass
class ToolContext:
    """Everything a tool call may use. One per agent; the session owns it.

    ``cwd`` is the agent's current directory (Bash moves it, and resets it to
    ``project_root`` when a command leaves the working directories).
    ``read_state`` maps absolute paths to the mtime seen when Read last read
    them, for Edit's and Write's staleness checks. ``services`` carries the
    objects that higher layers hand down (the task registry, the sub-agent
    runtime, the session) without tools importing those layers
    (:class:`~catui.tools.base.ToolServices`). ``emit`` pushes a
    :mod:`catui.session.events` event into the owning session's event stream
    (a sub-agent's events reach the parent's consumers this way).
    """

    cwd: Path
    project_root: Path
    permissions: PermissionContext = field(default_factory=PermissionContext)
    read_state: dict[str, float] = field(default_factory=dict)
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    agent_id: str | None = None
    agent_type: str | None = None
    agent_depth: int = 0
    """How deep the owning agent is nested: the main agent 0, its children 1, theirs 2, …"""
    interactive: bool = False
    ask_user: Callable[[list[dict[str, Any]]], Awaitable[dict[str, str]]] | None = None
    todos: list[dict[str, Any]] = field(default_factory=list)
    emit: Callable[[Any], None] | None = None
    services: ToolServices = field(default_factory=ToolServices)
    team: TeamMembership | None = None
    """Set on a teammate's context only: the team it belongs to (spec 12.3's rules read it)."""
    session: AgentConversation | None = None
    """The session that owns this context; that session sets it when it is built."""
    plan: PlanModeState = field(default_factory=PlanModeState)
    worktree: EnteredWorktree | None = None
    """Set while the agent works in a worktree it entered with EnterWorktree (None otherwise)."""

    @property
    def tool_use_id(self) -> str | None:
        """The id of the tool_use this call answers (calls of one agent may run concurrently).

        One context serves all of an agent's calls, so the id lives in a context variable
        that the session sets in each call's own asyncio task.
        """
        return CURRENT_TOOL_USE_ID.get()


class Tool(ABC):
    """A tool the model can call.

    Subclasses set ``name``, ``input_model_ref`` (or ``input_model``) and ``read_only``, write a
    ``description`` and an async ``call``. The JSON schema sent to the model is the stored one of
    :mod:`catui.tools.static_schemas`, or derived from ``input_model`` by :func:`schema_from_model`.

    catui's own tools name their input model, ``"module:QualName"`` in ``input_model_ref``, and keep it in
    a sibling ``<tool>_input`` module: it is imported, and with it pydantic, on the first access of
    ``input_model`` (the first validation of a call's input), not when the tool is defined
    (:mod:`catui.lazy`). Tools whose model is made at run time (MCP's, the SDK's) set ``input_model``.
    """

    name: ClassVar[str]
    input_model: ClassVar[type[ToolInput]]
    input_model_ref: ClassVar[str] = ""
    """Where the input model is defined, ``"module:QualName"``; loaded on first access of ``input_model``."""
    read_only: ClassVar[bool] = False
    aliases: ClassVar[tuple[str, ...]] = ()
    _api_cache: tuple[str, dict[str, Any], int] | None = None

    @property
    @abstractmethod
    def description(self) -> str: ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        ref = cls.__dict__.get("input_model_ref")
        if ref and "input_model" not in cls.__dict__:
            type.__setattr__(cls, "input_model", _InputModelRef(ref))

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the input: the stored one when there is one (the model is not loaded for it)."""
        for klass in type(self).__mro__:
            declared = klass.__dict__.get("input_model")
            if declared is not None:
                if isinstance(declared, _InputModelRef):
                    stored = stored_schema_by_key(declared.ref)
                    if stored is not None:
                        return _copy_json(stored)
                break
        return schema_from_model(self.input_model)

    def to_api(self) -> dict[str, Any]:
        """The tool as it is sent to the model.

        Built once per description and shared by every request that sends this tool (a fan-out of a
        thousand children sends the same few tools thousands of times): callers must not change it.
        """
        return self._api_memo()[1]

    def api_chars(self) -> int:
        """The length of :meth:`to_api` as JSON, for estimates of a request's size."""
        return self._api_memo()[2]

    def _api_memo(self) -> tuple[str, dict[str, Any], int]:
        description = self.description
        memo = self._api_cache
        if memo is None or memo[0] != description:
            api = {"name": self.name, "description": description, "input_schema": self.input_schema()}
            memo = self._api_cache = (description, api, len(json.dumps(api, ensure_ascii=False)))
        return memo

    def is_enabled(self) -> bool:
        return True

    def is_read_only(self, args: Any) -> bool:
        """Whether this particular call only reads (read-only calls run concurrently)."""
        return self.read_only

    def is_concurrency_safe(self, args: Any) -> bool:
        """Whether this call may run at the same time as its neighbours (read-only calls, Agent calls)."""
        return self.is_read_only(args)

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        """Describe the call for the permission check; file and shell tools override this."""
        return PermissionRequest(
            tool_name=self.name, tool_input=args.model_dump(by_alias=True), read_only=self.is_read_only(args)
        )

    def observable_input(self, raw_input: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """The call's input as permission callbacks (the SDK's can_use_tool) see it.

        The model's input by default; a tool may add what it would act on (ExitPlanMode adds the plan).
        """
        return dict(raw_input)

    @abstractmethod
    async def call(self, args: Any, ctx: ToolContext) -> ToolResult: ...


class _InputModelRef:
    """``Tool.input_model`` of a tool that names its model by ``input_model_ref``: imports the model on first access."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self._model: type[ToolInput] | None = None

    def __get__(self, obj: object, owner: type | None = None) -> type[ToolInput]:
        model = self._model
        if model is None:
            module, _, qualname = self.ref.partition(":")
            found: Any = importlib.import_module(module)  # lazy (catui.lazy): the model and pydantic load here
            for part in qualname.split("."):
                found = getattr(found, part)
            model = self._model = found
        return model


def input_validation_error() -> type[ValidationError]:
    """pydantic's ValidationError, for ``except input_validation_error() as exc`` around a model's validation.

    An ``except`` clause's class is looked up only when an exception propagates, and then the input model
    has loaded pydantic already: the modules that validate tool input do not import it themselves.
    """
    from pydantic import ValidationError  # lazy (catui.lazy)

    return ValidationError


_SCHEMA_CACHE: dict[type[BaseModel], dict[str, Any]] = {}


def schema_from_model(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model as Claude Code sends it: no titles, closed objects, 2020-12.

    Generated once per model class (pydantic takes about a millisecond per tool, and every
    request of every agent sends every tool); each call returns a fresh copy callers may change.
    """
    cached = _SCHEMA_CACHE.get(model)
    if cached is None:
        cached = _SCHEMA_CACHE[model] = stored_schema(model) or generated_schema(model)
    return _copy_json(cached)


def generated_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The schema of ``model`` generated from it now (builds the model); :func:`schema_from_model` prefers the
    stored copy of :mod:`catui.tools.static_schemas`."""
    return _build_schema(model)


def _copy_json(node: Any) -> Any:
    # A JSON tree holds only dicts, lists and immutable scalars; this is several times faster than deepcopy.
    if isinstance(node, dict):
        return {k: _copy_json(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy_json(v) for v in node]
    return node


def _build_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(by_alias=True)
    schema = _clean(_inline_refs(raw, raw.get("$defs", {})))
    out: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT}
    out.update(schema)
    out["additionalProperties"] = False
    return out


def _inline_refs(node: Any, defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> Any:
    """Replace ``$ref``s to ``$defs`` by the definitions themselves: nested objects are sent inline.

    A recursive model keeps its ``$ref`` (and its ``$defs``), since it cannot be inlined.
    """
    if isinstance(node, dict):
        ref = node.get("$ref")
        name = ref[len("#/$defs/") :] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
        if name is not None and name in defs and name not in seen:
            merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
            return _inline_refs(merged, defs, seen | {name})
        out = {k: _inline_refs(v, defs, seen) for k, v in node.items() if k != "$defs"}
        if "$defs" in node and '"$ref": "#/$defs/' in json.dumps(out):
            out["$defs"] = node["$defs"]
        return out
    if isinstance(node, list):
        return [_inline_refs(v, defs, seen) for v in node]
    return node


def _clean(node: Any) -> Any:
    if isinstance(node, dict):
        node = dict(node)
        node.pop("title", None)
        if "anyOf" in node:
            # Optional[X] comes out as anyOf [X, null]; the model is sent plain X.
            options = [o for o in node["anyOf"] if o != {"type": "null"}]
            if len(options) == 1:
                merged = {k: v for k, v in node.items() if k != "anyOf"}
                merged.update(options[0])
                node = merged
            if node.get("default", 0) is None:
                node.pop("default")
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        return {k: _clean(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node
