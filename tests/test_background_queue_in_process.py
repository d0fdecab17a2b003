"""A queued background agent seen from inside the app: TaskOutput reports it ``queued``; it runs once a place frees.

A real app (build_app) on the scripted provider; children wait on the Gate tool
the test opens (helpers from test_background_agents), so the order is the test's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.tools.task_output import TaskOutputTool
from catui.tools.task_output_input import TaskOutputInput
from tests.test_background_agents import (  # noqa: F401  (_isolated: the module's autouse fixture, used here too)
    NOTED,
    Driver,
    Gates,
    _isolated,
    agent_call,
    launched,
    make_app,
    parent_notifications,
    parent_turns,
    until,
    worker_turns,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    return folder


async def test_task_output_shows_a_queued_agent_that_runs_when_a_place_frees(tmp_path: Path, project: Path) -> None:
    gates = Gates()
    turns = [NOTED, *parent_turns([agent_call("one"), agent_call("two")]), *worker_turns("one", "two")]
    app = make_app(tmp_path, project, turns, gates, env={"CATUI_MAX_CONCURRENT_SUBAGENTS": "1"})
    driver = Driver(app)
    await gates.wait_entered("one")
    await until(lambda: len(launched(driver.events)) == 2)
    first, second = (end.data["agentId"] for end in launched(driver.events))

    peek = await TaskOutputTool().call(TaskOutputInput(task_id=second, block=False), app.session.ctx)
    assert "<retrieval_status>not_ready</retrieval_status>" in str(peek.content)
    assert "<status>queued</status>" in str(peek.content)
    assert peek.data["status"] == "queued"
    assert app.tasks.get(first).status == "running"
    assert "two" not in gates.entered  # it has not started

    gates.gate("one").set()
    await gates.wait_entered("two")  # the freed place went to the queued agent
    assert app.tasks.get(second).status == "running"
    gates.gate("two").set()
    await driver.done()

    notes = parent_notifications(app)
    assert sorted(n["id"] for n in notes) == sorted([first, second])
    assert {n["status"] for n in notes} == {"completed"}
    await app.aclose()
