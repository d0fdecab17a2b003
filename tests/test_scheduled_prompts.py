"""Scheduled prompts (CronCreate / CronDelete / CronList): the schedule, the durable file, the tools through
the real CLI against the loopback Anthropic server, and firing between turns of the interactive front end."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from catui.app import RunOptions, build_app
from catui.cli.tui.interactive import InteractiveSession
from catui.errors import CatuiError
from catui.tasks.schedule import SCHEDULE_FILE, CronExpressionError, CronSchedule, ScheduleClock
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env

START = datetime(2026, 3, 2, 9, 0, 30, tzinfo=timezone(timedelta(hours=1)))  # a Monday, 09:00:30 local


class FakeClock:
    """A local clock the test moves; its sleep advances time instead of waiting."""

    def __init__(self, start: datetime = START) -> None:
        self.current = start
        self.on_sleep: list[Any] = []
        self.may_advance: Any = lambda: True

    def now(self) -> datetime:
        return self.current

    async def sleep(self, seconds: float) -> None:
        if self.may_advance():
            self.current += timedelta(seconds=seconds)
        for hook in self.on_sleep:
            hook(self.current)
        await asyncio.sleep(0.001)  # let the event loop run other tasks (the stdin reader)

    def clock(self) -> ScheduleClock:
        return ScheduleClock(now=self.now, sleep=self.sleep)


# ------------------------------------------------------------------ the schedule


def test_create_list_delete_and_firing(tmp_path: Path) -> None:
    fake = FakeClock()
    schedule = CronSchedule(tmp_path / SCHEDULE_FILE, clock=fake.clock())
    every_five = schedule.create("*/5 * * * *", "Check the build")
    once = schedule.create("30 14 * * 1-5", "Write the report", recurring=False)
    assert every_five.next_fire == START.replace(minute=5, second=0).isoformat()
    assert once.next_fire == START.replace(hour=14, minute=30, second=0).isoformat()
    assert [e.id for e in schedule.entries()] == [every_five.id, once.id]
    assert schedule.take_due() == []

    fake.current = START.replace(minute=12)  # two five-minute marks passed: fires once, not twice
    assert [e.prompt for e in schedule.take_due()] == ["Check the build"]
    assert schedule.entries()[0].next_fire == START.replace(minute=15, second=0).isoformat()
    fake.current = START.replace(hour=14, minute=31)
    assert [e.prompt for e in schedule.take_due()] == ["Check the build", "Write the report"]
    assert [e.id for e in schedule.entries()] == [every_five.id]  # the one-shot is gone

    assert schedule.delete(every_five.id) is not None
    assert schedule.delete(every_five.id) is None
    assert schedule.entries() == [] and schedule.seconds_until_next() is None
    assert not (tmp_path / SCHEDULE_FILE).exists()  # nothing durable was ever scheduled


@pytest.mark.parametrize(("expression", "names"), [
    ("* * * *", "expected 5 fields"),
    ("61 * * * *", "'61 * * * *'"),
    ("* * * * * *", "got 6"),
    ("every monday", "expected 5 fields"),
])
def test_invalid_expressions_name_the_problem(tmp_path: Path, expression: str, names: str) -> None:
    schedule = CronSchedule(None, clock=FakeClock().clock())
    with pytest.raises(CronExpressionError, match="Invalid cron expression") as info:
        schedule.create(expression, "x")
    assert names in str(info.value) and "\n" not in str(info.value)


def test_durable_file_is_written_atomically_and_restored(tmp_path: Path) -> None:
    fake = FakeClock()
    path = tmp_path / SCHEDULE_FILE
    first = CronSchedule(path, clock=fake.clock())
    kept = first.create("0 * * * *", "Hourly check", durable=True)
    first.create("0 * * * *", "Session only")
    once = first.create("0 12 * * *", "Noon once", recurring=False, durable=True)
    saved = json.loads(path.read_text())
    assert [t["prompt"] for t in saved["tasks"]] == ["Hourly check", "Noon once"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["scheduled_tasks.json"]  # no temporary file left

    fake.current = START + timedelta(hours=5)  # the next session starts later: missed hourly runs are skipped
    second = CronSchedule(path, clock=fake.clock())
    assert second.restore() == 2 and second.restore_warnings == []
    restored = {e.id: e for e in second.entries()}
    assert restored[kept.id].next_fire == (START + timedelta(hours=6)).replace(minute=0, second=0).isoformat()
    assert restored[once.id].next_fire == once.next_fire  # a missed one-shot is due at once
    assert [e.prompt for e in second.take_due()] == ["Noon once"]
    assert [t["prompt"] for t in json.loads(path.read_text())["tasks"]] == ["Hourly check"]


def test_a_broken_durable_file_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / SCHEDULE_FILE
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    schedule = CronSchedule(path, clock=FakeClock().clock())
    assert schedule.restore() == 0
    [warning] = schedule.restore_warnings
    assert str(path) in warning and "fix or delete the file" in warning
    path.write_text(json.dumps({"tasks": [{"id": "x"}, {"id": "y", "cron": "0 * * * *", "prompt": "ok",
                                                         "recurring": True, "durable": True,
                                                         "created_at": START.isoformat(),
                                                         "next_fire": START.isoformat()}]}))
    again = CronSchedule(path, clock=FakeClock().clock())
    assert again.restore() == 1 and "entry 0 skipped" in again.restore_warnings[0]


def test_empty_prompt_and_durable_without_a_project_are_refused() -> None:
    schedule = CronSchedule(None, clock=FakeClock().clock())
    with pytest.raises(CatuiError, match="empty"):
        schedule.create("* * * * *", "  ")
    with pytest.raises(CatuiError, match="durable: false"):
        schedule.create("* * * * *", "x", durable=True)


# ------------------------------------------------------------------ the tools through the real CLI


def tool_use(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": args}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_cron_tools_through_the_cli(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script = {"turns": [
        {"match": {"last_is_tool_result": False}, "content": [
            tool_use("CronCreate", cron="61 * * * *", prompt="never"),
            tool_use("CronCreate", cron="*/5 * * * *", prompt="Check the build", durable=True),
            tool_use("CronCreate", cron="0 9 * * 1", prompt="Weekly notes", recurring=False),
            tool_use("CronDelete", id="nope"),
            tool_use("CronCreate", cron="* * * * *", prompt="bad", every="day"),
        ]},
        {"match": {"last_is_tool_result": True}, "content": [tool_use("CronList")]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "Scheduled."}]},
    ]}
    with AnthropicTestServer(script) as server:
        out = subprocess.run(
            [sys.executable, "-m", "catui", "-p", "Schedule things", "--permission-mode", "bypassPermissions"],
            cwd=project, env=cli_env(tmp_path, server), capture_output=True, text=True, timeout=60,
        )
        bodies = server.bodies()
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Scheduled."  # print mode ends: scheduled prompts never fire there
    assert {"CronCreate", "CronDelete", "CronList"} <= {t["name"] for t in bodies[0]["tools"]}
    create = next(t for t in bodies[0]["tools"] if t["name"] == "CronCreate")["input_schema"]
    assert create["required"] == ["cron", "prompt"] and create["additionalProperties"] is False

    invalid, durable, once, unknown, extra = tool_results(bodies[1])
    assert invalid.get("is_error") and "Invalid cron expression '61 * * * *'" in result_text(invalid)
    assert not durable.get("is_error") and "Check the build" in result_text(durable)
    assert not once.get("is_error") and "one-shot" in result_text(once)
    assert unknown.get("is_error") and "No scheduled prompt has id 'nope'" in result_text(unknown)
    assert extra.get("is_error") and "every" in result_text(extra)

    [listing] = tool_results(bodies[2])
    lines = result_text(listing).splitlines()
    assert len(lines) == 2 and any("Check the build" in line for line in lines)
    assert any("Weekly notes" in line for line in lines)
    saved = json.loads((project / SCHEDULE_FILE).read_text())
    assert [t["prompt"] for t in saved["tasks"]] == ["Check the build"]
    assert saved["tasks"][0]["cron"] == "*/5 * * * *" and saved["tasks"][0]["recurring"] is True


# ------------------------------------------------------------------ firing between turns (interactive)


async def test_a_restored_durable_prompt_fires_between_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeClock()
    earlier = CronSchedule(project / SCHEDULE_FILE, clock=fake.clock())  # what a previous session left
    earlier.create("10 9 * * *", "Check the build", recurring=False, durable=True)
    fire_at = START.replace(minute=10, second=0)

    script = {"turns": [
        {"match": {"last_user_contains": "hello"}, "content": [{"type": "text", "text": "Hi."}]},
        {"match": {"last_user_contains": "Check the build"}, "content": [{"type": "text", "text": "Green."}]},
    ]}
    read_fd, write_fd = os.pipe()
    stdin = os.fdopen(read_fd, "r")
    writer = os.fdopen(write_fd, "w")
    writer.write("hello\n")
    writer.flush()

    def end_input_after_the_prompt_fired(now: datetime) -> None:
        if now > fire_at + timedelta(minutes=1) and not writer.closed:
            writer.close()  # the user leaves (end of input) only after the scheduled turn

    fake.on_sleep.append(end_input_after_the_prompt_fired)
    with AnthropicTestServer(script) as server:
        fake.may_advance = lambda: len(server.bodies()) >= 1  # time moves once the user's turn has started
        app = build_app(RunOptions(cwd=project, model="claude-sonnet-4-6", interactive=True, env=server.env(),
                                   permission_mode="bypassPermissions", clock=fake.clock()))
        assert [e.prompt for e in app.session.ctx.services.schedule.entries()] == ["Check the build"]
        ui = InteractiveSession(app, stdin=stdin, stdout=io.StringIO())
        try:
            assert await asyncio.wait_for(ui.run(None), timeout=30) == 0
        finally:
            ui.close()
            await app.aclose()
            stdin.close()
        bodies = server.bodies()

    assert len(bodies) == 2
    first_turn, scheduled_turn = bodies
    assert "Check the build" not in json.dumps(first_turn["messages"])  # never inside the user's turn
    assert scheduled_turn["messages"][-2]["role"] == "assistant"  # a turn of its own, after the answer "Hi."
    last = scheduled_turn["messages"][-1]["content"]
    assert ([b["text"] for b in last] if isinstance(last, list) else [last]) == ["Check the build"]
    assert json.loads((project / SCHEDULE_FILE).read_text())["tasks"] == []  # the one-shot is used up


def test_print_mode_does_not_restore_durable_prompts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    project = tmp_path / "project"
    project.mkdir()
    CronSchedule(project / SCHEDULE_FILE, clock=FakeClock().clock()).create("0 * * * *", "Hourly", durable=True)
    with AnthropicTestServer({"turns": []}) as server:
        app = build_app(RunOptions(cwd=project, model="claude-sonnet-4-6", env=server.env(), write_transcript=False))
        assert app.session.ctx.services.schedule.entries() == []
        interactive = build_app(RunOptions(cwd=project, model="claude-sonnet-4-6", env=server.env(),
                                           interactive=True, write_transcript=False))
        assert [e.prompt for e in interactive.session.ctx.services.schedule.entries()] == ["Hourly"]
