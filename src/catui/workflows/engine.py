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
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from catui.errors import CatuiError

MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
STEP_TIME_LIMIT_S = 30
"""CPU seconds one synchronous stretch of the script may take, its promise jobs included (an endless loop,
``await`` in it or not, ends the run)."""
META_TIME_LIMIT_S = 2
"""CPU seconds :func:`read_meta` gives the code before the first ``await`` (the launch text waits for it)."""
RESULT_MAX_CHARS = 16 * 1024 * 1024
"""The longest return value (as JSON) a script may give: it goes into the record, the output and the
notification the model reads; larger output belongs in files an agent writes."""
LOG_MESSAGE_MAX_CHARS = 64 * 1024
"""A longer ``log()`` message is cut to this, with a note."""
LOG_TOTAL_MAX_CHARS = 16 * 1024 * 1024
"""``log()`` output kept for one run; later messages are left out, with one note."""
OUTBOX_MAX_CHARS = 64 * 1024 * 1024
"""What one synchronous stretch may queue (``agent()`` prompts and options, log lines) before it awaits."""
MAX_JSON_DEPTH = 200
"""How deeply a value crossing between the script and catui may nest (the return value, options, results)."""
ERROR_MAX_CHARS = 2000
"""A script's error message is cut to this (it goes in a one-line error and the notification)."""

_META = re.compile(r"^(\s*)export\s+const\s+meta\s*=", re.MULTILINE)
_ERROR_LINE = re.compile(r"at <input>:(\d+)")
_PREFIX = "globalThis.__main = async function () {"
_SHOWN_AROUND = 100
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_HOST_KINDS = frozenset({"agent", "workflow", "phase", "log"})

# What the script sees: agent, parallel, pipeline, phase, log, workflow, budget, args. What catui calls:
# the __catui_* functions, fixed on the global object (the script can neither replace nor reach their
# state), built on JSON.stringify/parse and Promise.prototype.then as they were before the script ran. What
# they hand over is still checked on the Python side: a script may give any object a toJSON.
_PRELUDE = r"""
(function (global) {
  var stringify = JSON.stringify, parse = JSON.parse;
  var then = Function.prototype.call.bind(Promise.prototype.then);
  var slice = Function.prototype.call.bind(String.prototype.slice);
  var defineProperty = Object.defineProperty, create = Object.create;
  var pending = create(null), outbox = [], outboxChars = 0, nextId = 0;
  var numbers = {total: null, spent: 0, remaining: null};
  var state = {done: false, failed: false, value: null, error: null};
  var LOG_MAX = __LOG_MAX__, RESULT_MAX = __RESULT_MAX__, ERROR_MAX = __ERROR_MAX__;
  function json(value, what) {
    var text = stringify(value);
    if (typeof text !== "string") throw new TypeError(what + " cannot be turned into JSON");
    return text;
  }
  function queue(id, kind, payloadJson) {
    var entry = '{"id":' + id + ',"kind":"' + kind + '","payload":' + payloadJson + "}";
    outbox[outbox.length] = entry;
    outboxChars += entry.length;
  }
  function call(kind, payload) {
    var payloadJson = json(payload, kind + "() options");
    return new Promise(function (resolve, reject) {
      var id = ++nextId;
      pending[id] = [resolve, reject];
      queue(id, kind, payloadJson);
    });
  }
  function fixed(name, value) {
    defineProperty(global, name, {value: value, writable: false, enumerable: false, configurable: false});
  }
  function message(error) {
    var text;
    try { text = (error && error.message !== undefined) ? String(error.message) : String(error); }
    catch (e) { text = "the script failed with a value that cannot be shown"; }
    return text.length > ERROR_MAX ? slice(text, 0, ERROR_MAX) + "… (cut)" : text;
  }
  fixed("__catui_take", function () {
    var text = "[";
    for (var i = 0; i < outbox.length; i++) text += (i ? "," : "") + outbox[i];
    outbox = []; outboxChars = 0;
    return text + "]";
  });
  fixed("__catui_queued_chars", function () { return outboxChars; });
  fixed("__catui_settle", function (id, ok, text) {
    var p = pending[id]; delete pending[id];
    if (p === undefined) return;
    if (ok) p[0](parse(text)); else p[1](new Error(text));
  });
  fixed("__catui_set_budget", function (text) { numbers = parse(text); });
  fixed("__catui_state", function () {
    return stringify({done: state.done === true, failed: state.failed === true,
                      error: typeof state.error === "string" ? state.error : null,
                      size: typeof state.value === "string" ? state.value.length : 0});
  });
  fixed("__catui_value", function () { return state.value; });
  fixed("__catui_meta", function () {
    var text;
    try { text = stringify(global.__meta === undefined ? null : global.__meta); } catch (e) { return "null"; }
    return typeof text === "string" && text.length <= RESULT_MAX ? text : "null";
  });
  fixed("__catui_start", function () {
    var main = global.__main;
    function fail(error) { state.failed = true; state.error = message(error); state.done = true; }
    then(main(), function (v) {
      try {
        var text = json(v === undefined ? null : v, "the return value");
        if (text.length > RESULT_MAX) {
          throw new RangeError("the return value is " + text.length + " characters of JSON, over the " +
                               RESULT_MAX + " allowed: return a summary and let agents write large output to files");
        }
        state.value = text; state.done = true;
      } catch (e) { fail(e); }
    }, fail);
  });
  global.agent = function agent(prompt, opts) { return call("agent", {prompt: String(prompt), opts: opts || {}}); };
  global.parallel = function parallel(thunks) {
    return Promise.all(thunks.map(function (t) {
      var p = typeof t === "function" ? t() : t;
      return Promise.resolve(p).catch(function () { return null; });
    }));
  };
  global.pipeline = async function pipeline(items) {
    var stages = Array.prototype.slice.call(arguments, 1);
    return Promise.all(items.map(async function (item, index) {
      var value = item;
      for (var i = 0; i < stages.length; i++) value = await stages[i](value, item, index);
      return value;
    }));
  };
  global.phase = function phase(title) { queue(0, "phase", json(String(title), "phase()")); };
  global.log = function log(text) {
    text = typeof text === "string" ? text : stringify(text);
    text = typeof text === "string" ? text : String(text);
    if (text.length > LOG_MAX) text = slice(text, 0, LOG_MAX) + "… (" + (text.length - LOG_MAX) + " more characters cut)";
    queue(0, "log", stringify(text));
  };
  global.workflow = function workflow(ref, args) {
    var payload;
    if (typeof ref === "string") payload = {name: ref};
    else if (ref !== null && typeof ref === "object" && typeof ref.scriptPath === "string") {
      payload = {scriptPath: ref.scriptPath};
    } else {
      return Promise.reject(new TypeError("workflow() expects a workflow name (string) or {scriptPath: string}"));
    }
    payload.args = args === undefined ? null : args;
    return call("workflow", payload);
  };
  global.budget = {
    get total() { return numbers.total; },
    spent: function () { return numbers.spent; },
    remaining: function () { return numbers.remaining; },
  };
})(globalThis);
""".replace("__LOG_MAX__", str(LOG_MESSAGE_MAX_CHARS)).replace("__RESULT_MAX__", str(RESULT_MAX_CHARS)).replace(
    "__ERROR_MAX__", str(ERROR_MAX_CHARS))


class ScriptParseError(CatuiError):
    """A script QuickJS cannot compile; ``line``/``column`` are 1-based positions in the script."""

    def __init__(self, message: str, line: int, column: int, source_line: str) -> None:
        self.line, self.column, self.source_line = line, column, source_line
        shown, offset = source_line, 0
        if len(source_line) > 2 * _SHOWN_AROUND:  # a long line is shown around the column
            offset = max(0, column - 1 - _SHOWN_AROUND)
            shown = ("…" if offset else "") + source_line[offset:column - 1 + _SHOWN_AROUND] + "…"
            offset -= 1 if offset else 0
        caret = " " * max(0, column - 1 - offset) + "^"
        super().__init__(f"Script parse error: {message} ({line}:{column})\n\n{shown}\n{caret}")


class ScriptFailed(CatuiError):
    """The script threw (or returned a rejected promise): the run ends ``failed`` with this message."""


class Host(Protocol):
    """What the script's host functions do (the workflow runner)."""

    def agent(self, prompt: str, opts: dict[str, Any]) -> Awaitable[Any]: ...
    def phase(self, title: str) -> None: ...
    def log(self, message: str) -> None: ...
    def budget(self, what: str) -> float | None: ...
    def sub_workflow(self, ref: Any, args: Any) -> Awaitable[Any]:
        """``workflow(ref, args)``: ``ref`` is a name or ``{"scriptPath": path}``."""
        ...


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
    lone = _LONE_SURROGATE.search(source)
    if lone is not None:  # not a character: QuickJS cannot be given it (JSON text can carry one)
        at_line = source.count("\n", 0, lone.start()) + 1
        column = lone.start() - (source.rfind("\n", 0, lone.start()) + 1) + 1
        raise ScriptParseError(f"a lone surrogate (U+{ord(lone.group()):04X}) is not a character; write it as an "
                               f"escape such as \\u{ord(lone.group()):04x} inside a string", at_line, column,
                               source.split("\n")[at_line - 1].encode("utf-8", "backslashreplace").decode("utf-8"))
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
    """The column of the error: the shortest cut of the bad line that already gives the same error.

    Each try parses the script up to the cut, so on a long line (a script may be half a megabyte on one
    line) the cut is found by bisection rather than one column at a time.
    """
    head = "\n".join(lines[: line - 1]) + ("\n" if line > 1 else "")
    text = lines[line - 1]

    def same_error(column: int) -> bool:
        ctx = _new_context()
        try:
            ctx.eval(_wrapped(head + text[:column]))
        except Exception as exc:
            cut_message, cut_line = _syntax_message(exc)
            return cut_message == message and cut_line == line
        return False

    if len(text) * (len(head) + len(text)) <= 4_000_000:
        return next((column for column in range(1, len(text) + 1) if same_error(column)), max(1, len(text)))
    low, high = 1, len(text)
    if not same_error(high):
        return max(1, len(text))
    while low < high:
        middle = (low + high) // 2
        if same_error(middle):
            high = middle
        else:
            low = middle + 1
    return high


def read_meta(source: str) -> dict[str, Any]:
    """The script's ``meta`` object (its code up to the first ``await`` runs, sandboxed, with no host, for at
    most :data:`META_TIME_LIMIT_S`); {} when the script has none or fails before defining it."""
    ctx = _new_context(time_limit_s=META_TIME_LIMIT_S)
    try:
        ctx.eval(_PRELUDE)
        ctx.eval("var args = null;")
        ctx.eval(_wrapped(source))
    except Exception:  # the run reports any error; the launch text just has no meta then
        return {}
    try:
        ctx.eval("__catui_start()")
    except Exception:  # a slow or failing start may still have defined meta first
        pass
    try:
        meta = _decode(str(ctx.eval("__catui_meta()")), "meta")
    except Exception:
        return {}
    return meta if isinstance(meta, dict) else {}


def _depth(value: Any) -> int:
    """How deeply ``value`` (decoded JSON) nests, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


_EXACT_INTEGERS = 2 ** 53


def _javascript_integer(literal: str) -> int | float:
    """A JSON integer from JavaScript: a number (a double) there, so beyond 2**53 it stands for the double it
    was printed from (JSON.stringify prints 6.762507234403714e16 as 67625072344037140), and a float keeps that
    value where an int would differ from it (found by the fuzzing: a float passed through a workflow came back
    as another number)."""
    number = int(literal)
    return number if -_EXACT_INTEGERS <= number <= _EXACT_INTEGERS else float(literal)


def _decode(text: Any, what: str) -> Any:
    """JSON from the script, decoded; ScriptFailed (naming ``what``) when it is not JSON or nests too deeply."""
    if not isinstance(text, str):
        raise ScriptFailed(f"{what} did not come back as JSON text")
    try:
        value = json.loads(text, parse_int=_javascript_integer)
    except RecursionError:
        raise ScriptFailed(f"{what} nests more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError as exc:
        raise ScriptFailed(f"{what} is not valid JSON ({exc})") from None
    if _depth(value) > MAX_JSON_DEPTH:
        raise ScriptFailed(f"{what} nests more than {MAX_JSON_DEPTH} levels deep")
    return value


def _encode(value: Any, what: str) -> str:
    """``value`` as JSON for the script; ScriptFailed when it is not JSON or nests too deeply."""
    try:
        if _depth(value) > MAX_JSON_DEPTH:
            raise ValueError(f"it nests more than {MAX_JSON_DEPTH} levels deep")
        return json.dumps(value, allow_nan=False)  # ASCII: a lone surrogate crosses as its escape
    except (TypeError, ValueError, RecursionError) as exc:
        raise ScriptFailed(f"{what} cannot be given to the script as JSON: {exc}") from None


def _js_failure(exc: Exception, memory_limit: int = MEMORY_LIMIT_BYTES,
                time_limit_s: float = STEP_TIME_LIMIT_S) -> ScriptFailed:
    """A QuickJS error (out of memory, interrupted, an exception the script left uncaught) as one line."""
    text = (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:ERROR_MAX_CHARS]
    return ScriptFailed(_explained(text, memory_limit, time_limit_s))


def _explained(text: str, memory_limit: int, time_limit_s: float) -> str:
    """QuickJS's words for its ceilings, with the ceiling named (they reach catui thrown or as a rejection)."""
    if text.endswith("out of memory"):
        text += f" (a workflow script may use {memory_limit // (1024 * 1024)} MB)"
    elif text.endswith("interrupted"):
        text += (f": the script ran {time_limit_s:g} CPU seconds without waiting for an agent "
                 "(an endless loop?)")
    return text


@dataclass
class _Request:
    id: int
    kind: str
    payload: Any


@dataclass
class ScriptEngine:
    """One run of one script: start it, feed host results back, get its return value.

    Everything that comes from the script is checked before catui acts on it: the requests it queued, its
    state, its return value (size and depth). A synchronous stretch of the script, promise jobs included,
    has ``time_limit_s`` of CPU time.
    """

    source: str
    args: Any
    host: Host
    on_meta: Callable[[dict[str, Any]], None] | None = None
    memory_limit: int = MEMORY_LIMIT_BYTES
    time_limit_s: float = STEP_TIME_LIMIT_S
    meta: dict[str, Any] = field(default_factory=dict)
    _queue: list[_Request] = field(default_factory=list)
    _log_chars: int = 0

    def _eval(self, ctx: Any, code: str) -> Any:
        try:
            return ctx.eval(code)
        except Exception as exc:  # quickjs.JSException: out of memory, interrupted, a throw
            raise _js_failure(exc, self.memory_limit, self.time_limit_s) from None

    def _take_outbox(self, ctx: Any) -> None:
        queued = self._eval(ctx, "__catui_queued_chars()")
        if isinstance(queued, int | float) and queued > OUTBOX_MAX_CHARS:
            raise ScriptFailed(f"the script queued {int(queued):,} characters of agent() and log() requests "
                               f"without awaiting; at most {OUTBOX_MAX_CHARS:,}")
        items = _decode(self._eval(ctx, "__catui_take()"), "the script's requests")
        for item in items if isinstance(items, list) else [None]:
            request = _checked_request(item)
            if request.kind == "phase":
                self.host.phase(request.payload)
            elif request.kind == "log":
                self._log(request.payload)
            else:
                self._queue.append(request)

    def _log(self, message: str) -> None:
        if self._log_chars > LOG_TOTAL_MAX_CHARS:
            return
        self._log_chars += len(message)
        if self._log_chars > LOG_TOTAL_MAX_CHARS:
            message = f"(log() output passed {LOG_TOTAL_MAX_CHARS:,} characters; later messages are left out)"
        self.host.log(message)

    def _push_budget(self, ctx: Any) -> None:
        numbers = {what: self.host.budget(what) for what in ("total", "spent", "remaining")}
        self._eval(ctx, f"__catui_set_budget({json.dumps(json.dumps(numbers))})")

    async def run(self) -> Any:
        """Run the script to its end; its return value (JSON-decoded). Raises ScriptFailed or ScriptParseError."""
        check_syntax(self.source)
        ctx = _new_context(self.memory_limit, self.time_limit_s)
        ctx.eval(_PRELUDE)
        self._eval(ctx, f"var args = JSON.parse({json.dumps(_encode(self.args, 'args'))});")
        self._eval(ctx, _wrapped(self.source))
        running: dict[asyncio.Task[Any], int] = {}
        try:
            self._step(ctx, "__catui_start()")
            meta = _decode(self._eval(ctx, "__catui_meta()"), "meta")
            self.meta = meta if isinstance(meta, dict) else {}
            if self.on_meta is not None:
                self.on_meta(self.meta)
            while True:
                self._take_outbox(ctx)
                state = _decode(self._eval(ctx, "__catui_state()"), "the script's state")
                if not isinstance(state, dict):
                    raise ScriptFailed("the script's state is not an object")
                if state.get("done") is True:
                    if state.get("failed") is True:
                        raise ScriptFailed(_explained(str(state.get("error") or "the script failed"),
                                                      self.memory_limit, self.time_limit_s))
                    return _decode(self._eval(ctx, "__catui_value()"), "the return value")
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
                        try:
                            text = json.dumps(_encode(task.result(), "the agent's result"))
                        except ScriptFailed as exc:
                            error = exc
                        else:
                            self._step(ctx, f"__catui_settle({request_id}, true, {text})")
                            continue
                    self._step(ctx, f"__catui_settle({request_id}, false, {json.dumps(str(error))})")
        finally:
            for task in running:
                task.cancel()

    async def _serve(self, request: _Request) -> Any:
        payload = request.payload
        if request.kind == "agent":
            return await self.host.agent(payload["prompt"], payload["opts"])
        ref = payload["name"] if "name" in payload else {"scriptPath": payload["scriptPath"]}
        return await self.host.sub_workflow(ref, payload.get("args"))

    def _step(self, ctx: Any, code: str) -> None:
        self._push_budget(ctx)
        started = time.thread_time()
        self._eval(ctx, code)  # QuickJS's own limit bounds this one evaluation
        self._drain(ctx, started)

    def _drain(self, ctx: Any, started: float) -> None:
        # Each promise job is a separate call into QuickJS, which restarts its clock: `while (true) await null`
        # would never be stopped by it. This clock counts the whole stretch.
        # Checked after every job: one job may itself run up to QuickJS's limit.
        while True:
            try:
                if not ctx.execute_pending_job():
                    return
            except Exception as exc:
                raise _js_failure(exc, self.memory_limit, self.time_limit_s) from None
            if time.thread_time() - started > self.time_limit_s:
                raise ScriptFailed(f"InternalError: interrupted: the script ran {self.time_limit_s:g} CPU seconds "
                                   "without waiting for an agent (an endless loop?)")


def _checked_request(item: Any) -> _Request:
    """One queued request, as the prelude writes it; ScriptFailed for anything else (a script that gave
    Object.prototype a toJSON, for one)."""
    problem = "the script's requests are not in catui's form (did it change JSON or Object.prototype?)"
    if not isinstance(item, dict) or not isinstance(item.get("id"), int) or item.get("kind") not in _HOST_KINDS:
        raise ScriptFailed(problem)
    kind, payload = item["kind"], item.get("payload")
    if kind in ("phase", "log"):
        if not isinstance(payload, str):
            raise ScriptFailed(problem)
    elif kind == "agent":
        if not isinstance(payload, dict) or not isinstance(payload.get("prompt"), str):
            raise ScriptFailed(problem)
        payload = {"prompt": payload["prompt"], "opts": payload.get("opts")}  # the host checks the options
    elif not isinstance(payload, dict) or not (isinstance(payload.get("name"), str)
                                               or isinstance(payload.get("scriptPath"), str)):
        raise ScriptFailed(problem)
    elif isinstance(payload.get("name"), str):
        payload = {"name": payload["name"], "args": payload.get("args")}
    else:
        payload = {"scriptPath": payload["scriptPath"], "args": payload.get("args")}
    return _Request(item["id"], kind, payload)
