"""Feature switches: CATUI_ and Claude Code names, truthiness, settings keys."""

from __future__ import annotations

import pytest

from catui.config.flags import (
    agent_teams_enabled,
    auto_background_ms,
    background_tasks_disabled,
    fork_subagent_enabled,
    is_truthy,
    send_message_enabled,
    telemetry_enabled,
)
from catui.config.settings import Settings
from catui.errors import ConfigurationError


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "Yes", "on", " on "])
def test_truthy(value: str) -> None:
    assert is_truthy(value)


@pytest.mark.parametrize("value", [None, "", "0", "false", "no", "off", "2", "enabled"])
def test_not_truthy(value: str | None) -> None:
    assert not is_truthy(value)


@pytest.mark.parametrize("name", ["CATUI_DISABLE_BACKGROUND_TASKS", "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"])
def test_background_tasks_disabled(name: str) -> None:
    assert background_tasks_disabled({name: "true"})
    assert not background_tasks_disabled({name: "0"})
    assert not background_tasks_disabled({})


@pytest.mark.parametrize("name", ["CATUI_AGENT_TEAMS", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"])
def test_agent_teams(name: str) -> None:
    assert agent_teams_enabled({name: "1"})
    assert not agent_teams_enabled({name: "off"})


def test_env_defaults_to_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATUI_AGENT_TEAMS", "yes")
    assert agent_teams_enabled()
    monkeypatch.delenv("CATUI_AGENT_TEAMS")
    monkeypatch.delenv("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", raising=False)
    assert not agent_teams_enabled()


def test_auto_background_ms() -> None:
    assert auto_background_ms({}, None) == 0
    assert auto_background_ms({"CATUI_AUTO_BACKGROUND_TASKS": "1"}, None) == 120000
    assert auto_background_ms({"CLAUDE_AUTO_BACKGROUND_TASKS": "true"}, None) == 120000
    assert auto_background_ms({}, Settings.from_dict({"autoBackgroundAgents": True})) == 120000
    assert auto_background_ms({}, {"autoBackgroundAgents": True}) == 120000
    assert auto_background_ms({"CATUI_AUTO_BACKGROUND_TASKS": "1", "CATUI_AUTO_BACKGROUND_MS": "250"}, None) == 250
    assert auto_background_ms({"CATUI_AUTO_BACKGROUND_MS": "0", "CATUI_AUTO_BACKGROUND_TASKS": "1"}, None) == 0
    # disabled background tasks win
    env = {"CATUI_AUTO_BACKGROUND_TASKS": "1", "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}
    assert auto_background_ms(env, None) == 0
    with pytest.raises(ConfigurationError, match="CATUI_AUTO_BACKGROUND_MS"):
        auto_background_ms({"CATUI_AUTO_BACKGROUND_MS": "soon"}, None)


def test_fork_subagent() -> None:
    assert not fork_subagent_enabled(None, {})
    assert fork_subagent_enabled({"forkSubagent": True}, {})
    assert fork_subagent_enabled(None, {"CATUI_FORK_SUBAGENT": "on"})
    assert not fork_subagent_enabled({"forkSubagent": True}, {"CATUI_FORK_SUBAGENT": "0"})


def test_send_message() -> None:
    assert send_message_enabled(None, {})
    assert not send_message_enabled({"sendMessage": False}, {})
    assert send_message_enabled({"sendMessage": False}, {"CATUI_SEND_MESSAGE": "1"})


def test_telemetry() -> None:
    assert telemetry_enabled(None, {})
    assert not telemetry_enabled({"telemetry": False}, {})
    assert not telemetry_enabled(None, {"CATUI_TELEMETRY": "0"})
    assert telemetry_enabled({"telemetry": True}, {})
    assert not telemetry_enabled({"telemetry": True}, {"DISABLE_TELEMETRY": "1"})
