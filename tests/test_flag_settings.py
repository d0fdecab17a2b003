"""The checks of ``applyFlagSettings`` and ``updateSettings`` calls (catui.app.flag_settings); what the calls do to
a running session is tested through the TypeScript SDK in tests/test_ts_sdk_flag_settings.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.app.flag_settings import check_flag_settings, update_settings, with_flag_rules
from catui.errors import ConfigurationError
from catui.permissions.context import PermissionContext
from catui.permissions.rules import parse_rule

STYLES = ("default", "Explanatory", "Learning")


def test_a_call_is_checked_whole_with_its_rules_under_the_flag_source(tmp_path: Path) -> None:
    call = check_flag_settings({"permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"], "ask": ["WebFetch"]},
                                "effortLevel": "LOW", "outputStyle": "Learning"}, base=tmp_path, styles=STYLES)
    assert [(str(r), r.behavior, r.source) for r in call.rules] == [
        ("Read", "allow", "flagSettings"), ("Bash(rm:*)", "deny", "flagSettings"), ("WebFetch", "ask", "flagSettings")]
    assert (call.effort, call.style, call.keys) == ("low", "Learning", {"permissions", "effortLevel", "outputStyle"})
    cleared = check_flag_settings({"permissions": None, "model": None, "effortLevel": None, "outputStyle": None},
                                  base=tmp_path, styles=None)
    assert (cleared.rules, cleared.model, cleared.effort, cleared.style) == ((), None, None, None)
    assert check_flag_settings({}, base=tmp_path, styles=STYLES).keys == frozenset()


@pytest.mark.parametrize(("settings", "named"), [
    ([], "'settings' must be an object"),
    ({"hooks": {}, "env": {}, "model": "opus"}, "not env, hooks"),
    ({"permissions": {"defaultMode": "plan", "deny": []}}, "not permissions.defaultMode"),
    ({"permissions": ["Bash"]}, "'permissions' must be an object"),
    ({"permissions": {"allow": ["Read", 3]}}, "permissions.allow must be a list of rule strings"),
    ({"permissions": {"deny": ["Bash(unclosed"]}}, "permissions.deny entry 'Bash(unclosed'"),
    ({"model": 5}, "'model' must be a model name or null"),
    ({"effortLevel": "extreme"}, "effortLevel: effort 'extreme' is not one of"),
    ({"outputStyle": "Nonesuch"}, "no output style named 'Nonesuch'; known: default, Explanatory, Learning"),
])
def test_a_call_is_refused_by_name(settings: object, named: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        check_flag_settings(settings, base=tmp_path, styles=STYLES)
    assert named in str(caught.value) and "nothing in this request was applied" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_style_is_refused_where_the_prompt_is_not_catuis_own(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="--system-prompt, which output styles do not change"):
        check_flag_settings({"outputStyle": "Learning"}, base=tmp_path, styles=None)


def test_with_flag_rules_replaces_only_the_previous_calls_rules(tmp_path: Path) -> None:
    start = parse_rule("Bash(echo a)", "deny", "flagSettings", base=tmp_path)  # the settings option's rule
    previous = parse_rule("Bash(echo b)", "deny", "flagSettings", base=tmp_path)
    user = parse_rule("Read", "allow", "userSettings", base=tmp_path)
    permissions = PermissionContext(rules=(start, user, previous))
    new = parse_rule("Bash(echo c)", "deny", "flagSettings", base=tmp_path)
    assert [str(r) for r in with_flag_rules(permissions, (previous,), (new,)).rules] == [
        "Bash(echo a)", "Read", "Bash(echo c)"]


def test_update_settings_takes_claude_codes_allow_list() -> None:
    styles: list[str] = []
    sources = ("user", "project", "local")
    update_settings("localSettings", {"outputStyle": "Explanatory"}, set_output_style=styles.append,
                    setting_sources=sources)
    assert styles == ["Explanatory"]
    refusals = [
        (("projectSettings", {"outputStyle": "x"}), "unsupported source 'projectSettings'"),
        (("localSettings", {"model": "opus"}), "update_settings keys not allowed: model"),
        (("localSettings", {"outputStyle": 3}), "values must be strings"),
        (("userSettings", {"effortLevel": "high"}), "no effort level per model"),
        (("localSettings", "Explanatory"), "'settings' must be an object"),
    ]
    for (source, settings), named in refusals:
        with pytest.raises(ConfigurationError, match=named):
            update_settings(source, settings, set_output_style=styles.append, setting_sources=sources)
    with pytest.raises(ConfigurationError, match="leave out localSettings"):
        update_settings("localSettings", {"outputStyle": "x"}, set_output_style=styles.append,
                        setting_sources=("user",))
    assert styles == ["Explanatory"]
