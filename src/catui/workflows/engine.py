"""The JavaScript side of a workflow: a QuickJS context that runs a Claude Code workflow script.

The script (``export const meta = {...}`` then a body that awaits ``agent()``, ``parallel()`` …) runs
as the body of an async function. The script never calls into Python (QuickJS's time
ceiling forbids it, and it keeps the sandbox simple): host functions put requests in an outbox array
(an ``agent`` call also gets a pending Promise); after each step :class:`ScriptEngine` takes the outbox,
hands the requests to its :class:`Host`, and settles the Promises as the Python side finishes. The
context has no module loader, no ``std``/``os`` modules and no timers, so a script cannot reach files,
the network or processes; it has a memory ceiling and a CPU-time ceiling per step.

QuickJS (the ``quickjs`` package) is imported when a workflow runs, never at CLI start-up
(docs/decisions.md: why QuickJS).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from catui.errors import CatuiError

MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
STEP_TIME_LIMIT_S = 30
"""CPU seconds one synchronous stretch of the script may take (an endless loop ends the run)."""

_META = re.compile(r"^(\s*)export\s+const\s+meta\s*=", re.MULTILINE)
_ERROR_LINE = re.compile(r"at <input>:(\d+)")
_PREFIX = "globalThis.__main = async function () {"

_PRELUDE = r"""
var __pending = {};
var __outbox = [];
var __nextId = 0;
var __budget = {total: null, spent: 0, remaining: null};
var __state = {done: false, failed: false, value: null, error: null};
function __call(kind, payload) {
  return new Promise(function (resolve, reject) {
    var id = ++__nextId;
    __pending[id] = [resolve, reject];
    __outbox.push({id: id, kind: kind, payload: payload});
  });
}
function __settle(id, ok, text) {
  var p = __pending[id]; delete __pending[id];
  if (ok) p[0](JSON.parse(text)); else p[1](new Error(text));
}
function agent(prompt, opts) { return __call("agent", {prompt: String(prompt), opts: opts || {}}); }
function parallel(thunks) {
  return Promise.all(thunks.map(function (t) {
    var p = typeof t === "function" ? t() : t;
    return Promise.resolve(p).catch(function () { return null; });
  }));
}
async function pipeline(items) {
  var stages = Array.prototype.slice.call(arguments, 1);
  return Promise.all(items.map(async function (item, index) {
    var value = item;
    for (var i = 0; i < stages.length; i++) value = await stages[i](value, item, index);
    return value;
  }));
}
function phase(title) { __outbox.push({id: 0, kind: "phase", payload: String(title)}); }
function log(message) {
  __outbox.push({id: 0, kind: "log", payload: typeof message === "string" ? message : JSON.stringify(message)});
}
function workflow(name, args) { return __call("workflow", {name: String(name), args: args === undefined ? null : args}); }
var budget = {
  get total() { return __budget.total; },
  spent: function () { return __budget.spent; },
  remaining: function () { return __budget.remaining; },
};
function __start() {
  __main().then(function (v) {
    __state.done = true; __state.value = JSON.stringify(v === undefined ? null : v);
  }, function (e) {
    __state.done = true; __state.failed = true;
    __state.error = (e && e.message !== undefined) ? String(e.message) : String(e);
  });
}
"""


class ScriptParseError(CatuiError):
    """A script QuickJS cannot compile; ``line``/``column`` are 1-based positions in the script."""

    def __init__(self, message: str, line: int, column: int, source_line: str) -> None:
        self.line, self.column, self.source_line = line, column, source_line
        caret = " " * max(0, column - 1) + "^"
        super().__init__(f"Script parse error: {message} ({line}:{column})\n\n{source_line}\n{caret}")


class ScriptFailed(CatuiError):
    """The script threw (or returned a rejected promise): the run ends ``failed`` with this message."""


class Host(Protocol):
    """What the script's host functions do (the workflow runner)."""

    def agent(self, prompt: str, opts: dict[str, Any]) -> Awaitable[Any]: ...
    def phase(self, title: str) -> None: ...
    def log(self, message: str) -> None: ...
    def budget(self, what: str) -> float | None: ...
    def sub_workflow(self, name: str, args: Any) -> Awaitable[Any]: ...


def _wrapped(source: str) -> str:
    # The prefix shares the script's first line, so QuickJS's line numbers are the script's.
    return _PREFIX + _META.sub(r"\1const meta = globalThis.__meta =", source) + "\n};"


def _new_context(memory_limit: int = MEMORY_LIMIT_BYTES, time_limit_s: float = STEP_TIME_LIMIT_S) -> Any:
    import quickjs  # type: ignore[import-untyped,unused-ignore]  # imported when a workflow runs

    ctx = quickjs.Context()
    ctx.set_memory_limit(memory_limit)
    ctx.set_time_limit(time_limit_s)
    return ctx


def _syntax_message(exc: Exception) -> tuple[str, int | None]:
    text = str(exc)
    found = _ERROR_LINE.search(text)
    first = text.splitlines()[0] if text else "syntax error"
    return first.removeprefix("SyntaxError: "), int(found.group(1)) if found else None


def check_syntax(source: str) -> None:
    """Raise :class:`ScriptParseError` (with line and column) when ``source`` is not a valid workflow script."""
    ctx = _new_context()
    try:
        ctx.eval(_wrapped(source))
        return
    except Exception as exc:  # quickjs.JSException: QuickJS reports a line, not a column
        message, line = _syntax_message(exc)
    lines = source.split("\n")
    line = line if line is not None and 1 <= line <= len(lines) else len(lines)
    column = _find_column(source, lines, line, message)
    raise ScriptParseError(message, line, column, lines[line - 1])


def _find_column(source: str, lines: list[str], line: int, message: str) -> int:
    """The column of the error: the shortest cut of the bad line that already gives the same error."""
    head = "\n".join(lines[: line - 1]) + ("\n" if line > 1 else "")
    text = lines[line - 1]
    for column in range(1, len(text) + 1):
        ctx = _new_context()
        try:
            ctx.eval(_wrapped(head + text[:column]))
        except Exception as exc:
            cut_message, cut_line = _syntax_message(exc)
            if cut_message == message and cut_line == line:
                return column
    return max(1, len(text))


def read_meta(source: str) -> dict[str, Any]:
    """The script's ``meta`` object (its code up to the first ``await`` runs, sandboxed, with no host);
    {} when the script has none or fails before defining it."""
    ctx = _new_context()
    try:
        ctx.eval(_PRELUDE)
        ctx.eval("var args = null;")
        ctx.eval(_wrapped(source))
        ctx.eval("__start()")
        meta = json.loads(ctx.eval("JSON.stringify(globalThis.__meta === undefined ? null : globalThis.__meta)"))
    except Exception:  # the run reports any error; the launch text just has no meta then
        return {}
    return meta if isinstance(meta, dict) else {}


@dataclass
class _Request:
    id: int
    kind: str
    payload: Any


@dataclass
class ScriptEngine:
    """One run of one script: start it, feed host results back, get its return value."""

    source: str
    args: Any
    host: Host
    on_meta: Callable[[dict[str, Any]], None] | None = None
    memory_limit: int = MEMORY_LIMIT_BYTES
    time_limit_s: float = STEP_TIME_LIMIT_S
    meta: dict[str, Any] = field(default_factory=dict)
    _queue: list[_Request] = field(default_factory=list)

    def _take_outbox(self, ctx: Any) -> None:
        for item in json.loads(ctx.eval("JSON.stringify(__outbox.splice(0))")):
            kind, payload = item["kind"], item["payload"]
            if kind == "phase":
                self.host.phase(payload)
            elif kind == "log":
                self.host.log(payload)
            else:
                self._queue.append(_Request(item["id"], kind, payload))

    def _push_budget(self, ctx: Any) -> None:
        numbers = {what: self.host.budget(what) for what in ("total", "spent", "remaining")}
        ctx.eval(f"__budget = {json.dumps(numbers)};")

    async def run(self) -> Any:
        """Run the script to its end; its return value (JSON-decoded). Raises ScriptFailed or ScriptParseError."""
        check_syntax(self.source)
        ctx = _new_context(self.memory_limit, self.time_limit_s)
        ctx.eval(_PRELUDE)
        ctx.eval(f"var args = JSON.parse({json.dumps(json.dumps(self.args))});")
        ctx.eval(_wrapped(self.source))
        running: dict[asyncio.Task[Any], int] = {}
        try:
            self._step(ctx, "__start()")
            meta = json.loads(ctx.eval("JSON.stringify(globalThis.__meta === undefined ? null : globalThis.__meta)"))
            self.meta = meta if isinstance(meta, dict) else {}
            if self.on_meta is not None:
                self.on_meta(self.meta)
            while True:
                self._drain(ctx)
                self._take_outbox(ctx)
                if ctx.eval("__state.done"):
                    if ctx.eval("__state.failed"):
                        raise ScriptFailed(str(ctx.eval("__state.error")))
                    return json.loads(ctx.eval("__state.value"))
                for request in self._queue:
                    running[asyncio.ensure_future(self._serve(request))] = request.id
                self._queue.clear()
                if not running:
                    raise ScriptFailed("the script is waiting on something that never settles "
                                       "(await only agent(), parallel(), pipeline() or workflow())")
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    request_id = running.pop(task)
                    error = task.exception()
                    if error is None:
                        text = json.dumps(json.dumps(task.result(), ensure_ascii=False))
                        self._step(ctx, f"__settle({request_id}, true, {text})")
                    else:
                        self._step(ctx, f"__settle({request_id}, false, {json.dumps(str(error))})")
        finally:
            for task in running:
                task.cancel()

    async def _serve(self, request: _Request) -> Any:
        if request.kind == "agent":
            payload = request.payload
            return await self.host.agent(payload["prompt"], payload.get("opts") or {})
        return await self.host.sub_workflow(request.payload["name"], request.payload.get("args"))

    def _step(self, ctx: Any, code: str) -> None:
        self._push_budget(ctx)
        try:
            ctx.eval(code)
        except Exception as exc:  # out of memory or time inside the script's synchronous code
            raise ScriptFailed(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        self._drain(ctx)

    def _drain(self, ctx: Any) -> None:
        try:
            while ctx.execute_pending_job():
                pass
        except Exception as exc:
            raise ScriptFailed(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None

