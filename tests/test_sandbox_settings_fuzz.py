"""Hypothesis at the sandbox's input boundary: the ``sandbox`` setting and ``excludedCommands`` matching.

Whatever a settings file holds (odd types, huge values, unicode, NULs, lone surrogates), reading it gives
settings that say exactly what was written — no entry dropped, so never a silently wider sandbox — or one
short line naming the field. Matching ``excludedCommands`` never fails and never takes a command out of the
sandbox unless the command names an excluded one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from catui.errors import ConfigurationError
from catui.permissions.sandbox_rules import is_excluded_command
from catui.sandbox.config import SandboxSettings, merge_sandbox_values, sandbox_settings_from
from tests.support.cli_env import SRC

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Text as a settings file can carry it: any code point, NULs and lone surrogates included (JSON allows "\ud800").
any_text = st.text(st.characters(), max_size=40) | st.sampled_from(
    ["\x00", "a\x00b", "\ud800", "~", "~nosuchuser/x", "~~~~", "..", "/", "*", "x" * 5000, "a/" * 3000, "docker;x",
     "$(docker)", "docker\nls", "é.example.com", "*.", "[::1]", "  "]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["enabled", "autoAllowBashIfSandboxed", "excludedCommands", "failIfUnavailable", "filesystem", "network"]
sandbox_values = json_values | st.dictionaries(
    st.sampled_from(FIELDS),
    json_values
    | st.dictionaries(st.sampled_from(["allowWrite", "denyWrite", "allowedDomains", "allowAllUnixSockets"]),
                      json_values | st.lists(any_text, max_size=4)),
    max_size=6,
)


def assert_one_clear_line(error: ConfigurationError) -> None:
    text = str(error)
    assert "\n" not in text and len(text) < 400, text
    assert text.startswith(("sandbox", "the sandbox option")), text


@FUZZ
@given(value=sandbox_values)
@example(value={"filesystem": {"denyWrite": ["a\x00b"]}})
@example(value={"filesystem": {"allowWrite": ["~nosuchuser/x"]}})
@example(value={"filesystem": {"denyWrite": ["x" * 5000]}})
@example(value={"enabled": "x" * 1_000_000})
@example(value={"excludedCommands": [[[[[]]]]] * 10_000})
def test_any_sandbox_value_reads_or_fails_with_one_line_naming_the_field(tmp_path: Path, value: Any) -> None:
    try:
        result = sandbox_settings_from(value, tmp_path)
    except ConfigurationError as error:
        assert_one_clear_line(error)
        return
    assert isinstance(result, SandboxSettings)


@FUZZ
@given(
    enabled=st.booleans(),
    excluded=st.lists(any_text, max_size=5),
    allow=st.lists(any_text, max_size=5),
    deny=st.lists(any_text, max_size=5),
    domains=st.lists(any_text, max_size=5),
)
def test_what_reads_is_exactly_what_was_written(
    tmp_path: Path, enabled: bool, excluded: list[str], allow: list[str], deny: list[str], domains: list[str]
) -> None:
    value = {"enabled": enabled, "excludedCommands": excluded,
             "filesystem": {"allowWrite": allow, "denyWrite": deny}, "network": {"allowedDomains": domains}}
    try:
        result = sandbox_settings_from(value, tmp_path)
    except ConfigurationError as error:
        assert_one_clear_line(error)
        return
    # Nothing dropped or altered: a lost denyWrite entry or domain restriction would widen the sandbox unseen.
    assert result.enabled is enabled
    assert result.excluded_commands == tuple(excluded)
    assert len(result.allow_write) == len(allow) and len(result.deny_write) == len(deny)
    assert result.allowed_domains == tuple(domains)


@FUZZ
@given(sdk=json_values)
def test_the_sdk_option_over_the_settings_never_fails_unclearly(tmp_path: Path, sdk: Any) -> None:
    try:
        sandbox_settings_from(merge_sandbox_values({"enabled": True}, sdk), tmp_path)
    except ConfigurationError as error:
        assert_one_clear_line(error)


def prefixes(patterns: list[str]) -> list[str]:
    found = []
    for pattern in patterns:
        text = pattern.strip()
        for suffix in (":*", " *", "*"):
            if text.endswith(suffix):
                text = text[: -len(suffix)].strip()
                break
        if text:
            found.append(text)
    return found


@FUZZ
@given(command=any_text | st.text(st.sampled_from("docker ;&|$()`'\"\n\\x=<>#"), max_size=40),
       patterns=st.lists(any_text | st.sampled_from(["docker", "docker:*", "git push", "*", " * "]), max_size=4))
@example(command="docker;x", patterns=["docker"])
@example(command="echo $(docker ps)", patterns=["docker"])
@example(command="FOO=1 docker ps", patterns=["docker"])
@example(command="docker\nrm -rf ~", patterns=["docker"])
def test_excluded_command_matching_never_fails_nor_excludes_a_command_that_names_none(
    command: str, patterns: list[str]
) -> None:
    excluded = is_excluded_command(command, tuple(patterns))
    if excluded:
        assert any(prefix in command for prefix in prefixes(patterns))


@pytest.mark.parametrize(
    ("value", "field"),
    [({"enabled": True, "filesystem": {"denyWrite": ["secrets\u0000"]}}, "sandbox.filesystem.denyWrite[0]"),
     ({"enabled": True, "filesystem": {"allowWrite": ["~nosuchuser/cache"]}}, "sandbox.filesystem.allowWrite[0]"),
     ({"enabled": True, "excludedCommands": ["docker", 7]}, "sandbox.excludedCommands[1]"),
     ({"enabled": True, "network": {"allowAllUnixSockets": "yes"}}, "sandbox.network.allowAllUnixSockets")],
    ids=["nul", "unknown user", "not a string", "not a bool"],
)
def test_a_bad_sandbox_field_stops_the_cli_with_one_line(tmp_path: Path, value: Any, field: str) -> None:
    project = tmp_path / "proj"
    (project / ".catui").mkdir(parents=True)
    settings_file = project / ".catui" / "settings.json"
    settings_file.write_text(json.dumps({"sandbox": value}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"), PYTHONPATH=str(SRC))
    script = tmp_path / "script.yaml"
    script.write_text('turns:\n- content: [{type: text, text: done}]\n  repeat: true\n')
    done = subprocess.run([sys.executable, "-m", "catui", "-p", "hi", "--model", f"scripted:{script}"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(settings_file) in lines[0] and field in lines[0]
