"""Settings the main session reads beyond its tools and prompt: effort, thinking, the Bash sandbox, and
where a model that failed to resolve was configured."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catui.agents.definition import AgentDefinition
from catui.app.options import RunOptions
from catui.errors import ConfigurationError
from catui.models.reasoning import Effort, parse_effort, thinking_from_budget

if TYPE_CHECKING:
    from catui.config.settings import Settings
    from catui.sandbox.policy import BashSandbox


def bash_sandbox(settings: Settings, from_sdk: Mapping[str, Any] | None, cwd: Path) -> BashSandbox | None:
    """The app's Bash sandbox when ``sandbox.enabled`` is on (settings, then the SDK option), else None."""
    if settings.get("sandbox") is None and not from_sdk:
        return None  # lazy (catui.lazy): the sandbox's modules load only when a run configures one
    from catui.sandbox.config import merge_sandbox_values, sandbox_settings_from
    from catui.sandbox.policy import BashSandbox

    try:
        config = sandbox_settings_from(merge_sandbox_values(settings.get("sandbox"), from_sdk), cwd)
    except ConfigurationError as exc:
        files = [f for f in settings.files if "sandbox" in f.data]
        where = "CatuiOptions.sandbox" if from_sdk else (
            str(files[-1].path) if files and files[-1].path is not None else "--settings")
        raise ConfigurationError(f"{where}: {exc}") from None
    return BashSandbox(config) if config.enabled else None


def session_effort(
    options: RunOptions, main_agent: AgentDefinition | None, settings: Settings, env: Mapping[str, str]
) -> Effort | None:
    """The main session's effort: the option, else the ``--agent`` definition's, else ``CLAUDE_CODE_EFFORT_LEVEL``,
    else the ``effortLevel`` setting (a bad setting is a warning and is ignored, as other settings problems are)."""
    if options.effort is not None:
        return options.effort
    if main_agent is not None and main_agent.effort is not None:
        return main_agent.effort
    from_env = parse_effort(env.get("CLAUDE_CODE_EFFORT_LEVEL"), "CLAUDE_CODE_EFFORT_LEVEL")
    if from_env is not None:
        return from_env
    files = [f for f in settings.files if "effortLevel" in f.data]
    where = str(files[-1].path) if files and files[-1].path is not None else "--settings"
    try:
        return parse_effort(settings.merged.get("effortLevel"), f"{where}: effortLevel")
    except ConfigurationError as exc:
        settings.warnings.append(f"{exc}; the setting is ignored")
        return None


def session_thinking(options: RunOptions, env: Mapping[str, str]) -> dict[str, Any] | None:
    """The extended-thinking config: the option's, else one from ``MAX_THINKING_TOKENS``."""
    thinking = options.thinking
    if thinking is None:
        thinking = thinking_from_budget(env.get("MAX_THINKING_TOKENS"), "MAX_THINKING_TOKENS")
    return thinking


def model_origin(cli_model: str | None, settings: Settings, env: Mapping[str, str]) -> str:
    """Where a model that failed to resolve was configured (a prefix for the error), when not on the command line."""
    if cli_model:
        return ""
    configured = settings.merged.get("model")
    if isinstance(configured, str) and configured.strip() and configured.strip().lower() != "default":
        files = [f for f in settings.files if "model" in f.data]
        where = str(files[-1].path) if files and files[-1].path is not None else "--settings"
        return f"{where}: the `model` setting: "
    for name in ("CATUI_MODEL", "ANTHROPIC_MODEL"):
        if env.get(name):
            return f"{name}: "
    return ""
