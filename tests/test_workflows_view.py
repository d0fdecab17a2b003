"""The ``/workflows`` command without a terminal: which runs it shows, how a run reads (phases, agents running,
done and failed, tokens), and its one-line errors. The live terminal view is in test_workflows_view_tmux.py."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from catui.cli.tui.slash_commands import SlashCommands
from catui.cli.tui.slash_workflows import WORKFLOW_COMMANDS
from catui.session.events import UsageEvent
from catui.workflows.live import LiveWorkflow, LiveWorkflows
from catui.workflows.runner import WorkflowFiles, WorkflowRunner


class Host:
    """A terminal-less host: what the command says, and the lines a watch prints once."""

    def __init__(self, workflows: LiveWorkflows | None) -> None:
        self.app: Any = SimpleNamespace(services=SimpleNamespace(workflows=workflows))
        self.context_tokens: int | None = None
        self.lines: list[str] = []

    def say(self, text: str, style: str | None = None) -> None:
        self.lines.append(text)

    async def ask(self, prompt: str) -> str | None:
        return None

    async def switch_session(self, resume: str | None, reason: str) -> bool:
        return False

    async def watch(self, render: Callable[[], list[str]], *, until: Callable[[], bool]) -> None:
        self.lines += render()


async def never(prompt: str, opts: dict[str, Any], label: str, started: Callable[[str], None]) -> Any:
    raise AssertionError("no agent runs here")


def a_run(tmp_path: Path, task_id: str, run_id: str) -> LiveWorkflow:
    runner = WorkflowRunner(files=WorkflowFiles(tmp_path, run_id), run_agent=never, concurrency=2)
    run = LiveWorkflow(task_id, run_id, "audit", "Audit the code", runner)
    run.set_meta({"phases": [{"title": "Plan"}, {"title": "Work"}, {"title": "Merge"}]})
    runner.phase("Plan")
    runner.progress += [{"type": "workflow_agent", "label": "plan it", "agentId": "a1", "phase": "Plan", "state": "start"},
                        {"type": "workflow_agent", "label": "plan it", "agentId": "a1", "phase": "Plan", "state": "done",
                         "tokens": 1200}]
    runner.phase("Work")
    runner.progress += [{"type": "workflow_agent", "label": "fix a", "agentId": "a2", "phase": "Work", "state": "start"},
                        {"type": "workflow_agent", "label": "fix b", "agentId": "a3", "phase": "Work", "state": "start"},
                        {"type": "workflow_agent", "label": "fix b", "agentId": "a3", "phase": "Work", "state": "error",
                         "error": "the server said no"}]
    run.observe(UsageEvent(model="m", usage={"input_tokens": 300, "output_tokens": 7}, agent_id="a2"))
    return run


def test_a_run_shows_its_phases_agents_and_tokens(tmp_path: Path) -> None:
    live = LiveWorkflows()
    live.add(a_run(tmp_path, "wtask0001", "wf_00000001-aaa"))
    host = Host(live)
    assert asyncio.run(SlashCommands(WORKFLOW_COMMANDS).dispatch(host, "/workflows")) is True
    header, ids, phases, *agents = host.lines
    assert header.startswith("◆ audit · Audit the code · running · 1 running, 1 done, 1 failed · 1,507 tokens · ")
    assert ids == "  run wf_00000001-aaa · task wtask0001"
    assert phases == "  phases: ✓ Plan  ▸ Work  · Merge"
    assert agents[0].split() == ["◐", "fix", "a", "[Work]", "running", "307", "tokens"]
    assert agents[1].split()[:6] == ["✓", "plan", "it", "[Plan]", "done", "1,200"]
    assert agents[2].endswith("error    0 tokens · the server said no") and "✗ fix b" in agents[2]


def test_which_runs_and_the_errors(tmp_path: Path) -> None:
    commands = SlashCommands(WORKFLOW_COMMANDS)
    off = Host(None)
    asyncio.run(commands.dispatch(off, "/workflows"))
    assert off.lines == ['/workflows: the Workflow tool is not offered in this session (it is in the current '
                         'profile, or with "workflows": true in the settings)']
    live = LiveWorkflows()
    empty = Host(live)
    asyncio.run(commands.dispatch(empty, "/workflows"))
    assert empty.lines == ["No workflows in this session yet."]

    finished = a_run(tmp_path, "wtask0001", "wf_00000001-aaa")
    finished.finish("completed", None)
    live.add(finished)
    live.add(a_run(tmp_path, "wtask0002", "wf_00000002-bbb"))
    host = Host(live)
    asyncio.run(commands.dispatch(host, "/workflows"))  # the running one only
    assert [line for line in host.lines if line.startswith("  run ")] == ["  run wf_00000002-bbb · task wtask0002"]
    host = Host(live)
    asyncio.run(commands.dispatch(host, "/workflows wtask0001"))  # by task id
    assert host.lines[0].startswith("✓ audit · Audit the code · completed")
    host = Host(live)
    asyncio.run(commands.dispatch(host, "/workflows wf_nope"))
    assert host.lines == ["/workflows: no workflow 'wf_nope' in this session; its runs: wf_00000001-aaa, "
                          "wf_00000002-bbb"]


def test_a_child_workflows_group_is_marked_by_its_own_agents(tmp_path: Path) -> None:
    run = a_run(tmp_path, "wtask0003", "wf_00000003-ccc")
    run.runner.reserve_phase("▸ inner")  # what workflow("inner") does: a group, not the current phase
    run.runner.progress += [{"type": "workflow_agent", "label": "look", "agentId": "a4", "phase": "▸ inner",
                             "state": "start"}]
    live = LiveWorkflows()
    live.add(run)
    host = Host(live)
    asyncio.run(SlashCommands(WORKFLOW_COMMANDS).dispatch(host, "/workflows"))
    assert host.lines[2] == "  phases: ✓ Plan  ▸ Work  · Merge  ▸ ▸ inner"
    assert any(line.split()[:4] == ["◐", "look", "[▸", "inner]"] for line in host.lines)
    run.runner.progress += [{"type": "workflow_agent", "label": "look", "agentId": "a4", "phase": "▸ inner",
                             "state": "done", "tokens": 5}]
    host = Host(live)
    asyncio.run(SlashCommands(WORKFLOW_COMMANDS).dispatch(host, "/workflows"))
    assert host.lines[2] == "  phases: ✓ Plan  ▸ Work  · Merge  ✓ ▸ inner"
