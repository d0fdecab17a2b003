"""Permission decisions that know the sandbox, the ``sandbox`` setting's reading, and the SDK option."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.app import build_app
from catui.errors import ConfigurationError
from catui.permissions.context import PermissionContext, PermissionRequest, PermissionRule
from catui.permissions.sandbox_rules import is_excluded_command
from catui.sandbox.config import merge_sandbox_values, sandbox_settings_from
from catui.sdk.options import CatuiOptions, run_options_from

PROJECT = Path("/work/proj")


def bash(command: str) -> PermissionRequest:
    return PermissionRequest("Bash", {"command": command}, subject=command)


def context(mode: str, *, sandboxed: bool, excluded: tuple[str, ...] = (), rules: tuple[PermissionRule, ...] = ()
            ) -> PermissionContext:
    ctx = PermissionContext(mode=mode, working_directories=(PROJECT,), rules=rules)  # type: ignore[arg-type]
    return ctx.with_sandboxed_bash(excluded) if sandboxed else ctx


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk", "auto"])
def test_sandboxed_bash_is_approved_where_it_would_be_asked_or_denied(mode: str) -> None:
    command = "npm install && echo done > /etc/motd"  # writes outside: the sandbox, not the check, refuses it
    without = context(mode, sandboxed=False).decide(bash(command))
    assert without.behavior in ("ask", "deny")
    decision = context(mode, sandboxed=True).decide(bash(command))
    assert decision.behavior == "allow" and "sandbox" in decision.reason


def test_plan_mode_is_unchanged_by_the_sandbox() -> None:
    assert context("plan", sandboxed=True).decide(bash("touch a")).behavior == "deny"


def test_excluded_commands_get_no_approval_from_the_sandbox() -> None:
    ctx = context("default", sandboxed=True, excluded=("docker:*", "git push"))
    assert ctx.decide(bash("docker run x")).behavior == "ask"
    assert ctx.decide(bash("make && git push origin")).behavior == "ask"
    assert ctx.decide(bash("git pushy")).behavior == "allow"  # a different command, sandboxed


def test_rules_still_win_over_the_sandbox() -> None:
    deny = PermissionRule("Bash", "rm:*", "deny", "userSettings")
    ask = PermissionRule("Bash", "curl:*", "ask", "userSettings")
    ctx = context("auto", sandboxed=True, rules=(deny, ask))
    assert ctx.decide(bash("rm -rf build")).behavior == "deny"
    assert ctx.decide(bash("curl example.com")).behavior == "ask"


def test_excluded_command_matching() -> None:
    assert is_excluded_command("docker ps", ("docker",))
    assert is_excluded_command("cd x && docker ps", ("docker *",))
    assert not is_excluded_command("dockerd", ("docker",))
    assert not is_excluded_command("ls", ())


def test_setting_fields_and_errors(tmp_path: Path) -> None:
    settings = sandbox_settings_from(
        {"enabled": True, "excludedCommands": ["git"], "filesystem": {"allowWrite": ["cache", "~/x"]},
         "network": {"allowedDomains": ["example.com"], "allowUnixSockets": ["/x"]}}, tmp_path)
    assert settings.enabled and settings.auto_allow_bash_if_sandboxed and not settings.fail_if_unavailable
    assert settings.allow_write == ((tmp_path / "cache").resolve(), (Path.home() / "x").resolve())
    assert settings.filters_network and not settings.network_enabled
    assert sandbox_settings_from({"network": {"allowedDomains": ["*"]}}, tmp_path).network_enabled
    assert not sandbox_settings_from(None, tmp_path).enabled
    for bad, field in [({"enabled": 1}, "sandbox.enabled"), ({"excludedCommands": "git"}, "sandbox.excludedCommands"),
                       ({"filesystem": []}, "sandbox.filesystem"), (["x"], "sandbox")]:
        with pytest.raises(ConfigurationError, match=field):
            sandbox_settings_from(bad, tmp_path)


def test_sdk_option_lays_over_settings(tmp_path: Path) -> None:
    merged = merge_sandbox_values({"enabled": False, "network": {"allowedDomains": ["*"]}},
                                  {"enabled": True, "network": {"x": 1}})
    assert merged == {"enabled": True, "network": {"allowedDomains": ["*"], "x": 1}}
    script = tmp_path / "s.yaml"
    script.write_text("turns: []\n")
    options = run_options_from(CatuiOptions(cwd=tmp_path, model=f"scripted:{script}", sandbox={"enabled": True}))
    app = build_app(options)
    assert app.session.config.tool_context.services.sandbox is not None and app.session.config.tool_context.services.sandbox.settings.enabled
    off = build_app(run_options_from(CatuiOptions(cwd=tmp_path, model=f"scripted:{script}")))
    assert off.session.config.tool_context.services.sandbox is None
    with pytest.raises(ConfigurationError, match=r"CatuiOptions\.sandbox"):
        run_options_from(CatuiOptions(cwd=tmp_path, sandbox=True))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"CatuiOptions\.sandbox: sandbox\.enabled"):
        build_app(run_options_from(CatuiOptions(cwd=tmp_path, model=f"scripted:{script}", sandbox={"enabled": "on"})))
