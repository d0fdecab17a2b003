"""``is_resume`` in catui_agent_tool_selected for an agent this process holds and continues (resume_held)."""

from __future__ import annotations

import json
from pathlib import Path

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
