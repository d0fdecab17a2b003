"""A Workflow-tool run's own dollar budget: the ``workflowBudgetUsd`` setting or ``CATUI_WORKFLOW_BUDGET_USD``
(the tool's input has no budget field, as Claude Code's), through the real CLI against the loopback server.
Once the run's agents have spent it no new agent starts (a rejection the script can catch), and the run is
recorded as a ``catui workflow run --budget`` run is; a resume through the tool keeps the run's budget, or the setting's when lower; a bad
value is a one-line error naming where it was set. Hypothesis on the values the setting may hold."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catui.errors import ConfigurationError
from catui.workflows.install import workflow_budget_usd
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo, run_catui
from tests.support.compat_cli import CURRENT, first_user_text, stream_run, text
from tests.test_workflows_limits import MODEL, answer, journal_of, main_turns, notification_text, records

SCRIPT = ('export const meta = {name: "spender", description: "Spends"}\n'
          'const first = await agent("Costly work")\n'
          'try { return {first, second: await agent("Second work")} }\n'
          'catch (e) { return {first, refused: e.message, total: budget.total, remaining: budget.remaining()} }\n')
COSTLY = answer("Costly work", "costly answer", usage={"input_tokens": 100000})  # $0.30 at Sonnet's price


def call(tool_id: str, **input_: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Workflow", "input": input_}


@pytest.mark.parametrize("how", ["setting", "variable"])
def test_a_tool_run_stops_new_agents_once_its_budget_is_spent(tmp_path: Path, how: str) -> None:
    repo = git_repo(tmp_path)
    given_as: tuple[str, ...] = ("--settings", json.dumps({"workflowBudgetUsd": 0.05})) if how == "setting" else ()
    env = {"CATUI_WORKFLOW_BUDGET_USD": "0.05"} if how == "variable" else {}
    turns = [*main_turns(call("toolu_wf", script=SCRIPT)), COSTLY, answer("Second work", "second")]
    with AnthropicTestServer({"turns": turns}) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **CURRENT, **env), "Run it",
                             "--permission-mode", "bypassPermissions", *MODEL, *given_as)
        assert done.returncode == 0, done.stderr
        assert not [r for r in server.requests if "Second work" in first_user_text(r.body)]
        note = notification_text(server)
    (record,) = records(tmp_path)
    assert record["result"]["first"] == "costly answer"
    assert "budget of $0.05 is spent" in record["result"]["refused"]
    assert record["result"]["total"] == 0.05 and record["result"]["remaining"] == 0
    # Recorded as `catui workflow run --budget` records it: the budget, the refused agent counted as an error.
    assert record["budget"] == 0.05 and record["status"] == "completed"
    assert record["counts"]["agents_done"] == 1 and record["counts"]["agents_error"] == 1
    assert "<agents_done>1</agents_done><agents_error>1</agents_error>" in note
    assert [e["label"] for e in journal_of(record, tmp_path) if e["type"] == "started"] == ["Costly work"]


def test_a_tool_resume_keeps_the_runs_budget_or_the_settings_lower_one(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    # The first run: budget 0.01 from the setting; its second agent is refused and the script fails with it.
    script = ('export const meta = {name: "strict", description: "Fails when refused"}\n'
              'const first = await agent("Costly work")\n'
              'return {first, second: await agent("Second work"), total: budget.total}\n')
    with AnthropicTestServer({"turns": [*main_turns(call("toolu_wf", script=script)), COSTLY]}) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Run it", "--permission-mode",
                             "bypassPermissions", *MODEL, "--settings", json.dumps({"workflowBudgetUsd": 0.01}))
        assert done.returncode == 0, done.stderr
    (record,) = records(tmp_path)
    assert record["status"] == "failed" and "budget of $0.01 is spent" in record["error"]
    # The resume, in a session without the setting: the journal gives the first agent back, the second runs
    # (a resumed run counts the spending of the agents it runs again from zero, as `catui workflow resume`).
    resume = call("toolu_resume", scriptPath=record["scriptCopy"], resumeFromRunId=record["runId"])
    turns = [{"match": {"last_user_contains": "<task-notification>"}, "content": text("noted"), "repeat": True},
             {"match": {"first_user_contains": "Resume it", "last_is_tool_result": False}, "content": [resume],
              "repeat": True},
             {"match": {"first_user_contains": "Resume it", "last_is_tool_result": True}, "content": text("resumed"),
              "repeat": True},
             answer("Second work", "second")]
    with AnthropicTestServer({"turns": turns}) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Resume it",
                             "--permission-mode", "bypassPermissions", *MODEL)
        assert done.returncode == 0, done.stderr
        assert not [r for r in server.requests if "Costly work" in first_user_text(r.body)]
    (record,) = records(tmp_path)
    assert record["status"] == "completed" and record["budget"] == 0.01
    assert record["result"] == {"first": "costly answer", "second": "second", "total": 0.01}
    # Resumed again where the setting is lower: the lower cap holds (everything comes from the journal).
    with AnthropicTestServer({"turns": turns}) as server:
        done, _ = stream_run(repo, cli_env(tmp_path, server, **CURRENT), "Resume it", "--permission-mode",
                             "bypassPermissions", *MODEL, "--settings", json.dumps({"workflowBudgetUsd": 0.001}))
        assert done.returncode == 0, done.stderr
        assert not [r for r in server.requests if re.search(r"(Costly|Second) work", first_user_text(r.body))]
    (record,) = records(tmp_path)
    assert record["budget"] == 0.001 and record["result"]["total"] == 0.001


def test_a_bad_budget_is_a_one_line_error_naming_where_it_was_set(tmp_path: Path) -> None:
    repo = git_repo(tmp_path)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"workflowBudgetUsd": "lots"}))
    with AnthropicTestServer({"turns": [{"content": text("hi"), "repeat": True}]}) as server:
        by_setting = run_catui(repo, cli_env(tmp_path, server, **CURRENT), "-p", "hi", timeout=120)
        (repo / ".claude" / "settings.json").unlink()
        by_variable = run_catui(repo, cli_env(tmp_path, server, **CURRENT, CATUI_WORKFLOW_BUDGET_USD="-2"), "-p",
                                "hi", timeout=120)
        assert not server.requests  # refused before any request
    assert by_setting.returncode == 1 and by_variable.returncode == 1
    assert by_setting.stderr.count("\n") == 1 and by_variable.stderr.count("\n") == 1
    assert "workflowBudgetUsd setting in " in by_setting.stderr and "settings.json" in by_setting.stderr
    assert "'lots'" in by_setting.stderr and "number >= 0" in by_setting.stderr
    assert "CATUI_WORKFLOW_BUDGET_USD='-2'" in by_variable.stderr


@given(value=st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                       st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                            max_size=2)),
       raw=st.one_of(st.none(), st.text(max_size=20), st.floats().map(str), st.integers().map(str)))
def test_fuzzed_budget_values_give_dollars_or_a_one_line_error(value: Any, raw: str | None) -> None:
    for settings, env, shown in (({"workflowBudgetUsd": value}, {}, "workflowBudgetUsd"),
                                 ({}, {} if raw is None else {"CATUI_WORKFLOW_BUDGET_USD": raw},
                                  "CATUI_WORKFLOW_BUDGET_USD")):
        try:
            budget = workflow_budget_usd(settings, env)
        except ConfigurationError as exc:
            assert shown in str(exc) and "\n" not in str(exc)
            continue
        if budget is None:
            assert (settings.get("workflowBudgetUsd") is None) if settings else not (raw or "").strip()
            continue
        assert isinstance(budget, float) and 0 <= budget < math.inf
        expected = settings["workflowBudgetUsd"] if settings else float(raw or "nan")
        assert budget == expected and not isinstance(expected, bool)
