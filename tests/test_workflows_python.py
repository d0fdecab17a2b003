"""Workflows from Python (catui.workflows, re-exported by catui.sdk) in this process, against the loopback
Anthropic server: a pydantic schema gives back an instance, a failed agent raises AgentFailed the workflow can
catch, a workflow that raises fails run_workflow with its message, and the API refuses calls outside a run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from catui.app import RunOptions
from catui.errors import CatuiError
from catui.models.resolve import clear_provider_cache
from catui.sdk import run_workflow
from catui.workflows import AgentFailed, agent, log, parallel, phase, pipeline, sub_workflow
from tests.support.anthropic_server import AnthropicTestServer


class Verdict(BaseModel):
    ok: bool
    reason: str


def answer(key: str, text: str) -> dict[str, Any]:
    return {"match": {"first_user_contains": key}, "repeat": True, "content": [{"type": "text", "text": text}]}


TURNS = [answer("Summarise", "a summary"), answer("Stage one", "one"), answer("Stage two", "two"),
         {"match": {"first_user_contains": "Judge", "last_is_tool_result": False}, "repeat": True,
          "content": [{"type": "tool_use", "name": "StructuredOutput", "input": {"ok": True, "reason": "fine"}}]},
         {"match": {"first_user_contains": "Judge", "last_is_tool_result": True}, "repeat": True,
          "content": [{"type": "text", "text": "done"}]}]


@pytest.fixture()
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CATUI_MAX_RETRIES", "1")
    with AnthropicTestServer({"turns": TURNS}) as running:
        for key, value in running.env().items():
            monkeypatch.setenv(key, value)
        clear_provider_cache()
        yield running
    clear_provider_cache()


async def review(args: dict[str, Any]) -> dict[str, Any]:
    await phase("Work")
    summary, missing = await parallel([lambda: agent("Summarise the notes"), lambda: agent("Unscripted task")])
    verdict = await agent("Judge the summary", schema=Verdict)
    assert isinstance(verdict, Verdict)
    try:
        await agent("Unscripted again")
        failure = None
    except AgentFailed as exc:
        failure = str(exc)
    staged = await pipeline(["x"], lambda v, item, i: agent("Stage one " + v),
                            lambda v, item, i: agent("Stage two " + v))
    await log("reviewed")
    return {"summary": summary, "missing": missing, "ok": verdict.ok, "failed": failure is not None,
            "staged": staged, "topic": args["topic"]}


def test_run_workflow_from_python(tmp_path: Path, server: Any) -> None:
    value = run_workflow(review, args={"topic": "t"}, options=RunOptions(cwd=tmp_path, permission_mode="bypassPermissions"))
    assert value == {"summary": "a summary", "missing": None, "ok": True, "failed": True, "staged": ["two"],
                     "topic": "t"}


def test_a_raising_workflow_fails_and_calls_outside_a_run_are_refused(tmp_path: Path, server: Any) -> None:
    async def broken() -> None:
        await agent("Summarise the notes")
        raise ValueError("nothing to do")

    with pytest.raises(CatuiError, match="failed: ValueError: nothing to do"):
        run_workflow(broken, options=RunOptions(cwd=tmp_path, permission_mode="bypassPermissions"))
    with pytest.raises(CatuiError, match="inside a workflow"):
        asyncio.run(agent("Summarise"))


def test_a_bad_schema_fails_at_once_and_sub_workflow_runs_a_script_as_a_step(tmp_path: Path, server: Any) -> None:
    (tmp_path / "child.js").write_text('return {args, said: await agent("Summarise the child")}\n')

    async def parent() -> dict[str, Any]:
        try:
            await agent("Summarise with a bad schema", schema={"type": "bogus"})
            refused = None
        except AgentFailed as exc:
            refused = str(exc)
        return {"refused": refused, "child": await sub_workflow(tmp_path / "child.js", {"n": 1})}

    value = run_workflow(parent, options=RunOptions(cwd=tmp_path, permission_mode="bypassPermissions"))
    assert value["refused"].startswith("agent({schema}) received an invalid JSON Schema: ")
    assert "(at $.type)" in value["refused"]
    assert value["child"] == {"args": {"n": 1}, "said": "a summary"}
    assert not [r for r in server.requests if "bad schema" in json.dumps(r.body)]  # that agent never started
