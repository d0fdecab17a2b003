"""The workflow script engine (QuickJS) on its own: the sandbox (no module loader, files, network, processes
or timers), the memory and time ceilings, parse errors with line and column, host calls and their failures."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from catui.workflows.engine import ScriptEngine, ScriptFailed, ScriptParseError, check_syntax, read_meta
from catui.workflows.runner import AgentFailed


class Host:
    """Answers agent() with the prompt upper-cased; a prompt starting with "fail" fails."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.phases: list[str] = []
        self.logs: list[str] = []

    async def agent(self, prompt: str, opts: dict[str, Any]) -> Any:
        self.prompts.append(prompt)
        await asyncio.sleep(0)
        if prompt.startswith("fail"):
            raise AgentFailed(f"agent {prompt!r} failed")
        return {"echo": prompt} if opts.get("schema") else prompt.upper()

    def phase(self, title: str) -> None:
        self.phases.append(title)

    def log(self, message: str) -> None:
        self.logs.append(message)

    def budget(self, what: str) -> float | None:
        return {"total": 2.0, "spent": 0.5, "remaining": 1.5}[what]

    async def sub_workflow(self, name: str, args: Any) -> Any:
        raise AgentFailed("no nested workflows here")


def run(source: str, args: Any = None, **limits: Any) -> tuple[Any, Host]:
    host = Host()
    value = asyncio.run(ScriptEngine(source=source, args=args, host=host, **limits).run())
    return value, host


def test_the_script_reaches_no_files_network_processes_or_timers() -> None:
    value, _ = run("return [typeof require, typeof fetch, typeof process, typeof std, typeof os, "
                   "typeof setTimeout, typeof XMLHttpRequest, typeof Deno]")
    assert value == ["undefined"] * 8
    with pytest.raises(ScriptParseError):
        check_syntax('import * as std from "std"\nreturn 1')


def test_memory_and_time_ceilings_end_the_run() -> None:
    with pytest.raises(ScriptFailed, match="interrupted"):
        run("while (true) {}", time_limit_s=1)
    with pytest.raises(ScriptFailed, match="out of memory"):
        run("const a = []; while (true) a.push(new Array(100000).fill(1))", memory_limit=32 * 1024 * 1024)


def test_host_calls_parallel_pipeline_phase_log_budget_and_args() -> None:
    value, host = run("""export const meta = {name: "t", description: "d"}
phase("P1")
log({n: 1})
const one = await agent("a", {label: "x"})
const many = await parallel([() => agent("b"), () => agent("fail c"), () => agent("d", {schema: {type: "object"}})])
const piped = await pipeline(["p", "q"], v => agent(v + "1"), v => agent(v + "2"))
let caught = null
try { await agent("fail e") } catch (e) { caught = e.message }
return {one, many, piped, caught, args, budget: [budget.total, budget.spent(), budget.remaining()]}
""", args={"k": [1, 2]})
    assert value == {"one": "A", "many": ["B", None, {"echo": "d"}], "piped": ["P12", "Q12"],
                     "caught": "agent 'fail e' failed", "args": {"k": [1, 2]}, "budget": [2.0, 0.5, 1.5]}
    assert host.phases == ["P1"] and host.logs == ['{"n":1}']


def test_a_throw_or_a_promise_that_never_settles_fails_the_run() -> None:
    with pytest.raises(ScriptFailed, match=r"^boom$"):
        run('await agent("a")\nthrow new Error("boom")')
    with pytest.raises(ScriptFailed, match="never settles"):
        run("await new Promise(() => {})")


def test_parse_errors_name_line_and_column_and_meta_is_read_before_the_run() -> None:
    with pytest.raises(ScriptParseError) as error:
        check_syntax("export const meta = {name: 'x'}\n\nlet ok = 1\nconst z = (1 + ;\n")
    assert (error.value.line, error.value.column) == (4, 16)
    assert str(error.value).endswith("(4:16)\n\nconst z = (1 + ;\n               ^")
    assert read_meta('export const meta = {name: "n", phases: [{title: "A"}]}\nawait agent("x")') == {
        "name": "n", "phases": [{"title": "A"}]}
    assert read_meta("return 1") == {}
