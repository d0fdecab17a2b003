"""The workflow engine attacked from outside: hostile scripts, hostile tool input, hostile files.

Every attack must end in a clear one-line error (a failed run, an error tool_result, exit 1 with a message)
within the engine's ceilings, and leave the process healthy: no traceback, no hang, no memory beyond the
ceilings. The memory attacks run in a child process under an address-space ``setrlimit``, so a regression
that pulls a script's data into Python fails the test instead of slowing the machine down.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from catui.errors import CatuiError
from catui.workflows.engine import (
    LOG_MESSAGE_MAX_CHARS,
    LOG_TOTAL_MAX_CHARS,
    MAX_JSON_DEPTH,
    ScriptEngine,
    ScriptFailed,
    ScriptParseError,
    check_syntax,
    read_meta,
)
from catui.workflows.runner import AgentFailed
from catui.workflows.script_file import read_script_file
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, run_catui

GUARD_S = 120  # a broken case fails here instead of hanging (not a timing assertion)


class QuickHost:
    """Answers agent() at once: the prompt upper-cased; "deep" answers a value nested too deeply to hand back."""

    def __init__(self) -> None:
        self.logs: list[str] = []
        self.prompts: list[str] = []

    async def agent(self, prompt: str, opts: Any) -> Any:
        self.prompts.append(prompt)
        await asyncio.sleep(0)
        if prompt == "deep":
            value: Any = "end"
            for _ in range(MAX_JSON_DEPTH + 5):
                value = [value]
            return value
        if not isinstance(opts, dict):
            raise AgentFailed("agent(prompt, options): options must be an object")
        return prompt.upper()

    def phase(self, title: str) -> None:
        pass

    def log(self, message: str) -> None:
        self.logs.append(message)

    def budget(self, what: str) -> float | None:
        return None

    async def sub_workflow(self, name: str, args: Any) -> Any:
        raise AgentFailed("no nested workflows here")


def run_script(source: str, args: Any = None, **limits: Any) -> tuple[Any, QuickHost]:
    host = QuickHost()
    engine = ScriptEngine(source=source, args=args, host=host, **limits)
    return asyncio.run(asyncio.wait_for(engine.run(), GUARD_S)), host


def failure_of(source: str, args: Any = None, **limits: Any) -> str:
    with pytest.raises(ScriptFailed) as caught:
        run_script(source, args, **limits)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 2200, message
    return message


# -- endless work -----------------------------------------------------------------------------------


def test_an_endless_loop_of_awaits_is_stopped_by_the_cpu_ceiling() -> None:
    # Each `await` is a separate promise job, and QuickJS restarts its clock for every one: the ceiling
    # counts the whole stretch on catui's side.
    assert "interrupted" in failure_of("async function f() { while (true) await null }\nawait f()", time_limit_s=1)
    assert "interrupted" in failure_of("for (;;) { await Promise.resolve(1) }", time_limit_s=1)
    assert "CPU seconds" in failure_of("while (true) {}", time_limit_s=1)
    # Slow jobs, each well within QuickJS's own limit: the count is checked after every one.
    assert "interrupted" in failure_of("for (;;) { const t = Date.now(); while (Date.now() - t < 200) {}\n"
                                       "await null }", time_limit_s=1)


def test_deep_recursion_and_a_promise_nothing_settles_end_the_run() -> None:
    assert "stack overflow" in failure_of("function f() { return f() }\nf()")
    assert "never settles" in failure_of("await new Promise(() => {})")
    assert "never settles" in failure_of("agent('a')\nawait new Promise(() => {})")


def test_meta_is_read_within_its_own_short_ceiling() -> None:
    # The Workflow tool reads meta while the model waits for the launch text: an endless loop after meta
    # must not hold it for the run's 30 CPU seconds.
    assert read_meta('export const meta = {name: "spin"}\nwhile (true) {}') == {"name": "spin"}
    assert read_meta("export const meta = {name: 'x'.repeat(20000000)}") == {}


# -- what crosses from the script to catui ------------------------------------------------------------


@pytest.mark.parametrize(("source", "expected"), [
    ("return () => 1", "the return value cannot be turned into JSON"),
    ("return Symbol('s')", "the return value cannot be turned into JSON"),
    ("return 1n", "bigint"),
    (f"let a = []\nfor (let i = 0; i < {MAX_JSON_DEPTH + 10}; i++) a = [a]\nreturn a",
     f"the return value nests more than {MAX_JSON_DEPTH} levels deep"),
    ("return 'x'.repeat(17 * 1024 * 1024)", "characters of JSON, over the 16777216 allowed"),
    ("const o = {}\no.o = o\nawait agent('x', o)", "circular"),
    ("await agent('x', {n: 1n})", "bigint"),
    ("throw {get message() { throw new Error('no') }}", "the script failed with a value that cannot be shown"),
    ("await import('std')", "could not load module 'std'"),
])
def test_values_that_cannot_cross_fail_the_run_with_a_clear_message(source: str, expected: str) -> None:
    message = failure_of(source)
    assert expected in message or expected in message.lower(), message


def test_a_huge_error_message_is_cut() -> None:
    message = failure_of("throw new Error('e'.repeat(10000000))")
    assert message.startswith("eee") and message.endswith("(cut)")


def test_prototype_pollution_cannot_forge_requests_or_break_the_host_functions() -> None:
    # Replacing what the host functions were built on does not reach them.
    value, host = run_script("JSON.parse = null\nJSON.stringify = () => '[{\"kind\":\"agent\"}]'\n"
                             "Array.prototype.push = null\nPromise.prototype.then = null\n"
                             "globalThis.__catui_take = () => '[]'\n__catui_settle = null\n"
                             "return await agent('x')")
    assert value == "X" and host.prompts == ["x"]
    # A toJSON on every object changes what JSON.stringify gives: refused, not obeyed.
    assert "not in catui's form" in failure_of(
        "Object.prototype.toJSON = function () { return {id: 1, kind: 'workflow', payload: 5} };\nawait agent('x')")
    # Non-object options reach the runner's own check and reject like any failed agent.
    value, _ = run_script("try { await agent('x', 'opts') } catch (e) { return e.message }")
    assert value == "agent(prompt, options): options must be an object"


def test_values_from_catui_that_cannot_cross_reject_the_call() -> None:
    value, _ = run_script("try { await agent('deep') } catch (e) { return e.message }")
    assert f"nests more than {MAX_JSON_DEPTH} levels deep" in value
    deep: Any = 1
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = {"k": deep}
    assert "args cannot be given to the script" in failure_of("return args", args=deep)
    assert "args cannot be given to the script" in failure_of("return args", args={"x": float("nan")})


def test_log_output_is_cut_per_message_and_per_run() -> None:
    value, host = run_script("for (let i = 0; i < 50; i++) log('x'.repeat(1000000))\nreturn 1")
    assert value == 1 and len(host.logs) == 50
    assert all(len(line) < LOG_MESSAGE_MAX_CHARS + 100 for line in host.logs)
    assert host.logs[0].endswith("more characters cut)")
    value, host = run_script("for (let i = 0; i < 400; i++) { log('y'.repeat(70000)); await agent('a') }\nreturn 2")
    assert value == 2 and len(host.prompts) == 400
    assert sum(len(line) for line in host.logs) < LOG_TOTAL_MAX_CHARS + LOG_MESSAGE_MAX_CHARS + 200
    assert host.logs[-1].startswith("(log() output passed")
    assert "without awaiting" in failure_of(
        "for (let i = 0; i < 1200; i++) log('z'.repeat(60000))\nawait agent('a')")


def test_lone_surrogates_are_refused_in_the_source_and_round_trip_in_values() -> None:
    with pytest.raises(ScriptParseError, match=r"lone surrogate \(U\+D800\).*\(2:11\)"):
        check_syntax('let a = 1\nlet b = "x\ud800y"')
    value, _ = run_script('return ["\\ud800", args]', args="\udfff")
    assert value == ["\ud800", "\udfff"]  # the files a run writes are checked through the CLI below


def test_a_long_line_with_a_syntax_error_is_reported_quickly_and_shown_around_the_column() -> None:
    # The column search parses the script once per try: one column at a time over a 400,000-character
    # line would be 400,000 parses of up to 400 KB.
    source = 'let a = "' + "b" * 400_000 + '" 5'
    with pytest.raises(ScriptParseError) as caught:
        check_syntax(source)
    assert caught.value.column == 400_012
    shown = str(caught.value).split("\n")
    assert len(shown[2]) < 300 and shown[3].index("^") == shown[2].index("5")


# -- memory: a child process under an address-space ceiling ----------------------------------------

MEMORY_ATTACKS = textwrap.dedent("""
    import asyncio, json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
    sys.path.insert(0, sys.argv[2])
    from catui.workflows.engine import ScriptEngine, ScriptFailed
    from tests.test_workflow_attacks import QuickHost

    ATTACKS = {
        "array bomb": "const a = []\\nwhile (true) a.push(new Array(100000).fill(1))",
        "string doubling": "let s = 'x'\\nwhile (true) s += s",
        "huge return": "return 'x'.repeat(120 * 1024 * 1024)",
        "log flood across awaits": "for (let i = 0; i < 600; i++) { log('x'.repeat(2000000)); await agent('a') }",
        "prompt flood": "const s = 'p'.repeat(30000000)\\nawait parallel([1, 2, 3].map(() => () => agent(s)))",
        "outbox flood": "for (;;) log('q'.repeat(60000))",
    }
    for name, source in ATTACKS.items():
        engine = ScriptEngine(source=source, args=None, host=QuickHost(), time_limit_s=20)
        try:
            value = asyncio.run(engine.run())
            outcome = {"ok": True, "value": str(value)[:80]}
        except ScriptFailed as exc:
            outcome = {"ok": False, "error": str(exc)}
        print(json.dumps({"attack": name, **outcome}), flush=True)
    print("healthy", flush=True)
""")


def test_memory_attacks_stay_within_the_ceilings(tmp_path: Path) -> None:
    script = tmp_path / "attacks.py"
    script.write_text(MEMORY_ATTACKS, encoding="utf-8")
    ceiling = 1536 * 1024 * 1024  # the script's 256 MB, catui and Python: a script's data copied into
    root = Path(__file__).resolve().parents[1]  # Python a few times over (the old engine) would pass it
    done = subprocess.run([sys.executable, str(script), str(ceiling), str(root)], capture_output=True, text=True,
                          timeout=600, cwd=root)
    assert done.returncode == 0 and done.stdout.rstrip().endswith("healthy"), done.stderr[-3000:]
    outcomes = {line["attack"]: line for line in map(json.loads, done.stdout.splitlines()[:-1])}
    assert "out of memory (a workflow script may use 256 MB)" in outcomes["array bomb"]["error"]
    assert "out of memory" in outcomes["string doubling"]["error"]
    assert "over the 16777216 allowed" in outcomes["huge return"]["error"] \
        or "out of memory" in outcomes["huge return"]["error"]
    assert outcomes["log flood across awaits"]["ok"] is True  # its log was cut, not kept whole
    assert outcomes["prompt flood"]["ok"] is False and "without awaiting" in outcomes["prompt flood"]["error"]
    assert outcomes["outbox flood"]["ok"] is False


# -- files named by the caller ------------------------------------------------------------------------


def test_script_files_must_be_regular_bounded_utf8_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.js"
    os.mkfifo(fifo)  # nobody writes: opening it must not wait
    (tmp_path / "big.js").write_text("x" * 600_000, encoding="utf-8")
    (tmp_path / "latin1.js").write_bytes(b"return '\xe9'")
    (tmp_path / "ok.js").write_text("return 1", encoding="utf-8")
    for path, message in ((Path("/dev/zero"), "not a regular file"), (fifo, "not a regular file"),
                          (tmp_path, "not a regular file"), (tmp_path / "big.js", "at most 524,288 characters"),
                          (tmp_path / "latin1.js", "not UTF-8 text (byte 8)"),
                          (tmp_path / "missing.js", "No such file or directory"),
                          (tmp_path / "nul\x00.js", "a file name cannot hold a NUL character")):
        with pytest.raises(CatuiError, match=re.escape(message)):
            read_script_file(path)
    assert read_script_file(tmp_path / "ok.js") == "return 1"


# -- through the command line -----------------------------------------------------------------------

CLI_ATTACKS = {
    "pollute.js": ("Object.prototype.toJSON = function () { return 7 };\nawait agent('x')", "not in catui's form"),
    "function.js": ("return () => 1", "the return value cannot be turned into JSON"),
    "circular.js": ("const o = {}\no.o = o\nawait agent('x', o)", "circular"),
    "never.js": ("await new Promise(() => {})", "never settles"),
    "recursion.js": ("function f() { return f() }\nf()", "stack overflow"),
    "unknown-option.js": ("return await agent('x', {schema: 5, color: 'red'})", "unknown option 'color'"),
    "bad-schema.js": ("return await agent('x', {schema: 5})", "schema must be a JSON Schema object"),
    "escape-name.js": ("export const meta = {name: '../../../../outside\\u0000/x'}\nreturn 3", None),
    "surrogate.js": ("return ['\\ud800', 'ok']", None),
}


def test_hostile_scripts_through_the_cli_end_with_one_line_errors(tmp_path: Path) -> None:
    for name, (source, _) in CLI_ATTACKS.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    os.mkfifo(tmp_path / "fifo.js")
    with AnthropicTestServer({"turns": [{"content": [{"type": "text", "text": "fine"}], "repeat": True}]}) as server:
        outcomes = {name: run_catui(tmp_path, cli_env(tmp_path, server), "workflow", "run", name,
                                    "--permission-mode", "bypassPermissions", timeout=GUARD_S)
                    for name in [*CLI_ATTACKS, "fifo.js"]}
    for name, done in outcomes.items():
        assert "Traceback" not in done.stderr, (name, done.stderr)
    for name, (_, expected) in CLI_ATTACKS.items():
        done = outcomes[name]
        if expected is None:
            continue
        assert done.returncode == 1, (name, done.stdout, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert expected in line, (name, line)
    fifo = outcomes["fifo.js"]
    assert fifo.returncode != 0 and "not a regular file" in fifo.stderr
    # meta.name names the script copy: only a plain file name part of it is used.
    escaped = outcomes["escape-name.js"]
    assert escaped.returncode == 0, escaped.stderr
    assert escaped.stdout.splitlines()[-1] == "3"
    assert not (tmp_path.parent / "outside").exists() and not any(tmp_path.parent.glob("outside*"))
    copies = list((tmp_path / "catui-home").rglob("scripts/*.js"))
    assert copies and all((tmp_path / "catui-home") in copy.parents for copy in copies)
    # A lone surrogate in the result is written as its JSON escape, on standard output and in the record.
    surrogate = outcomes["surrogate.js"]
    assert surrogate.returncode == 0, surrogate.stderr
    assert json.loads(surrogate.stdout.splitlines()[-1]) == ["\ud800", "ok"]
    records = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "catui-home").rglob("wf_*.json")]
    assert ["\ud800", "ok"] in [record.get("result") for record in records]


# -- the Workflow tool's input, fuzzed ------------------------------------------------------------------

odd_text = st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF,
                                          exclude_categories=()), max_size=40)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | odd_text
json_values = st.recursive(json_scalars, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(odd_text, children, max_size=4), max_leaves=12)
runnable = st.one_of(
    st.sampled_from(["return 1", "return args", "export const meta = {name: 'm'}\nreturn await agent('hi')",
                     "return await agent('x', {color: 1})", "throw new Error('no')", "log(args)\nreturn [args]",
                     "return 'x'.repeat(17 * 1024 * 1024)", "return await parallel([() => agent(String(args))])"]),
    odd_text.map(lambda text: "return " + json.dumps(text, ensure_ascii=False)),
    odd_text.map(lambda text: "log(" + json.dumps(text) + ")\nreturn await agent(" + json.dumps(text) + ")"),
    odd_text.map(lambda text: "export const meta = {name: " + json.dumps(text) + "}\nreturn 1"),
)
scripts = st.one_of(
    runnable,
    odd_text,
    st.sampled_from(["return 1", "return args", "export const meta = {name: 'm'}\nreturn await agent('hi')",
                     "return await agent('x', {color: 1})", "throw new Error('no')", "const y = ;", "",
                     "x" * 600_000, "return 'x'.repeat(17 * 1024 * 1024)"]),
    odd_text.map(lambda text: "return " + json.dumps(text, ensure_ascii=False)),
    odd_text.map(lambda text: "export const meta = {name: " + json.dumps(text) + "}\nreturn 1"),
)
field_values = {
    "script": scripts | json_values,
    "name": st.sampled_from(["deep-research", "nope", "../../etc/passwd", ""]) | odd_text | json_values,
    "description": odd_text | st.just("d" * 200_000) | json_values,
    "title": odd_text | json_values,
    "args": json_values,
    "scriptPath": st.sampled_from(["/dev/zero", "/dev/stdin", "/", "/proc/self/status", "missing.js", "~/x.js",
                                   "fifo.js", "latin1.js", "\x00"]) | odd_text | json_values,
    "resumeFromRunId": st.sampled_from(["wf_00000000-000", "wf_" + "a" * 500]) | odd_text | json_values,
}
plausible = {"description": odd_text, "title": odd_text, "args": json_values}
tool_inputs = st.one_of(
    st.fixed_dictionaries({"script": runnable}, optional=plausible),  # past validation: into the tool and the run
    st.fixed_dictionaries({"script": scripts}, optional=plausible),
    st.fixed_dictionaries({"scriptPath": field_values["scriptPath"]}, optional=plausible),
    st.fixed_dictionaries({"name": field_values["name"]}, optional=plausible),
    st.fixed_dictionaries({}, optional={**field_values, "extra": json_values}),
    json_values,
)


async def call_the_tool(project: Path, raw: Any, model: Path | None = None) -> str:
    """One Workflow call as a session makes it: validation, then the tool; a launched run must end. What
    happened, for Hypothesis's statistics."""
    from catui.app.build import build_app
    from catui.app.options import RunOptions
    from catui.session.failures import format_validation_error

    app = build_app(RunOptions(cwd=project, model=f"scripted:{model or project / 'model.json'}", permission_mode="bypassPermissions",
                               env={**os.environ, "CATUI_COMPAT": "2.1.332"}, setting_sources=[]))
    try:
        tool = app.session.find_tool("Workflow")
        assert tool is not None
        try:
            args = tool.input_model.model_validate(raw)
        except ValidationError as exc:
            assert format_validation_error(tool.name, exc)
            return "refused by the schema"
        result = await asyncio.wait_for(tool.call(args, app.session.ctx), GUARD_S)  # never raises
        text = result.content if isinstance(result.content, str) else json.dumps(result.content)
        if result.is_error:
            assert text.startswith("<tool_use_error>") and text.endswith("</tool_use_error>"), text[:300]
            return "an error tool_result"
        task_id = result.data["taskId"]
        task = await app.tasks.wait(task_id, GUARD_S)
        assert task.status in ("completed", "failed"), task.status
        assert json.loads(Path(task.output_file).read_text(encoding="utf-8"))["summary"] is not None
        notification = app.tasks.drain_notifications()
        assert notification and "<status>" in notification[-1].text
        return f"launched, {task.status}"
    finally:
        await app.aclose()


def test_the_tool_keeps_the_script_copy_in_the_run_folder_whatever_meta_name_says(tmp_path: Path) -> None:
    (tmp_path / "model.json").write_text(json.dumps({"turns": [{"content": [{"type": "text", "text": "fine"}],
                                                                "repeat": True}]}), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    script = "export const meta = {name: '../../../../../outside\\u0000/x'}\nreturn 3"
    asyncio.run(call_the_tool(project, {"script": script}, model=tmp_path / "model.json"))
    assert not any(tmp_path.rglob("outside*")) and not any(Path("/").glob("outside*"))
    (copy,) = Path(os.environ["CATUI_HOME"]).rglob("scripts/_.._.._.._.._outside__x-wf_*.js")
    assert copy.read_text(encoding="utf-8") == script


@pytest.fixture(scope="module")
def fuzz_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("fuzz")
    (project / "model.json").write_text(json.dumps({"turns": [{"content": [{"type": "text", "text": "fine"}],
                                                               "repeat": True}]}), encoding="utf-8")
    os.mkfifo(project / "fifo.js")
    (project / "latin1.js").write_bytes(b"return '\xe9'")
    return project


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(raw=tool_inputs)
@example(raw={"scriptPath": "\x00"})  # found by the fuzzing: a NUL in the name raised ValueError
@example(raw={"script": "return 1", "description": "\ud800"})  # found by the fuzzing: state.db refused the text
@example(raw={"resumeFromRunId": "wf_" + "a" * 300})  # found by the fuzzing: a file name too long (OSError)
@example(raw={"scriptPath": "~nosuchuser/x.js"})  # expanduser raised RuntimeError
@example(raw={"script": "export const meta = {name: '\\u0000../x'}\nreturn 1"})
def test_fuzzed_workflow_tool_input_gets_an_error_tool_result_or_a_run_that_ends(fuzz_project: Path,
                                                                                   raw: Any) -> None:
    event(asyncio.run(call_the_tool(fuzz_project, raw)))
