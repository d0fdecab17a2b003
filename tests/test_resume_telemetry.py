"""``is_resume`` for an agent this process holds and continues (resume_held); the deferred handoff review on read."""

from __future__ import annotations

import json
from pathlib import Path

from catui.tools.read import ReadTool
from catui.tools.read_input import ReadInput
from catui.tools.task_output import TaskOutputTool
from catui.tools.task_output_input import TaskOutputInput
from tests.test_background_agents import (
    NOTED,
    Driver,
    Gates,
    _isolated,  # noqa: F401  (autouse fixture: CATUI_HOME and HOME in tmp)
    agent_call,
    make_app,
    parent_turns,
    project,  # noqa: F401  (fixture)
    worker_turns,
)
from tests.test_background_stop_and_resume import next_note, send_message


async def test_a_held_agent_continued_by_send_message_is_recorded_as_a_resume(
    tmp_path: Path, project: Path  # noqa: F811
) -> None:
    gates = Gates()
    gates.gate("probe").set()
    more = {"match": {"system_contains": "You are the worker agent", "last_user_contains": "One more thing"},
            "content": [{"type": "text", "text": "Did one more thing."}]}
    app = make_app(tmp_path, project, [NOTED, more, *parent_turns([agent_call("probe")]), *worker_turns("probe")],
                   gates)
    await Driver(app).done()
    [task] = app.tasks.list()
    reply = await send_message(app, task.id, "One more thing, please.")
    assert not reply.is_error, reply.content
    note = await next_note(app)
    assert note["result"] == "Did one more thing."
    await app.aclose()
    records = [json.loads(line) for line in (tmp_path / "catui-home" / "telemetry.jsonl").read_text().splitlines()]
    selected = [(r["agent_type"], r["is_resume"], r["depth"]) for r in records
                if r["event"] == "catui_agent_tool_selected"]
    assert selected == [("worker", False, 1), ("worker", True, 1)]


# -- the deferred handoff review (spec 6.1 [15]) ---------------------------------------------------


async def test_output_read_in_auto_mode_is_reviewed_once_when_it_was_not_yet(
    tmp_path: Path, project: Path  # noqa: F811
) -> None:
    gates = Gates()
    gates.gate("a").set()
    gates.gate("b").set()
    review = {"name": "review", "match": {"system_contains": "security reviewer"},
              "content": [{"type": "text", "text": "<block>yes</block><reason>it read a secret</reason>"}],
              "repeat": True}
    app = make_app(tmp_path, project, [NOTED, review, *parent_turns([agent_call("a"), agent_call("b")]),
                                       *worker_turns("a", "b")], gates)
    await Driver(app).done()  # both ended in default mode: nobody reviewed them
    by_description = {t.description: t for t in app.tasks.list()}
    first, second = by_description["Job a"], by_description["Job b"]
    assert "handoff_review" not in first.output_file.read_text()
    ctx = app.session.ctx
    read = await TaskOutputTool().call(TaskOutputInput(task_id=first.id), ctx)
    assert "SECURITY WARNING" not in str(read.content)  # not auto mode: still no review

    ctx.permissions = ctx.permissions.with_mode("auto")
    read = await TaskOutputTool().call(TaskOutputInput(task_id=first.id), ctx)
    result = str(read.content).split("<result>\n", 1)[1]
    assert result.startswith("SECURITY WARNING: ") and "it read a secret" in result
    last = json.loads(first.output_file.read_text().splitlines()[-1])
    assert last["subtype"] == "handoff_review" and "it read a secret" in last["content"]
    again = await TaskOutputTool().call(TaskOutputInput(task_id=first.id), ctx)
    assert "SECURITY WARNING" not in str(again.content).split("<output>", 1)[0]  # reviewed once: not re-run

    shown = await ReadTool().call(ReadInput(file_path=str(second.output_file)), ctx)
    assert "handoff_review" in str(shown.content) and "it read a secret" in str(shown.content)
    engine = app.session.config.provider.engine  # type: ignore[attr-defined]
    assert sum(1 for _, turn in engine.history if turn.name == "review") == 2
    await app.aclose()
