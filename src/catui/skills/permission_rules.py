"""A skill's or command's ``allowed-tools`` as permission rules (used by the Skill tool and by typed commands)."""

from __future__ import annotations

from collections.abc import Sequence

from catui.permissions.context import PermissionRule
from catui.permissions.rules import RuleSyntaxError, parse_rule


def skill_permission_rules(name: str, allowed_tools: Sequence[str]) -> tuple[PermissionRule, ...]:
    """A skill's ``allowed-tools`` as allow rules, granted while the run that loaded it lasts (as Claude Code).

    An entry that is not valid rule syntax grants nothing (``catui skills show`` lists the entries).
    """
    rules: list[PermissionRule] = []
    for entry in allowed_tools:
        try:
            rules.append(parse_rule(entry, "allow", "session", origin=f"the {name} skill's allowed-tools"))
        except RuleSyntaxError:
            continue
    return tuple(rules)
