"""split_tool_specs, the one splitter of tool-spec lists, against the two it replaced.

``agents/tool_lists.py::split_outside_parens`` (agent ``tools`` fields) and
``permissions/rules.py::split_rule_list`` (``--allowedTools``) are kept below
as they were. They agreed on every input without a backslash; with one, only
the rule splitter read ``\\x`` as an escape. The shared splitter keeps the
rule splitter's reading everywhere: agents use only an entry's tool name, and
an agent's ``Bash(echo \\) x)`` is one entry, as the same text in a rule is.
"""

from __future__ import annotations

import random

import pytest

from catui.agents.tool_lists import parse_tool_list
from catui.permissions.tool_specs import split_tool_specs


def old_split_outside_parens(text: str) -> list[str]:
    """agents/tool_lists.py before the two splitters were merged."""
    if "(" not in text:
        return text.replace(",", " ").split()
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        items.append("".join(current))
    return [i.strip() for i in items if i.strip()]


def old_split_rule_list(text: str) -> list[str]:
    """permissions/rules.py before the two splitters were merged."""
    items: list[str] = []
    depth = 0
    current: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
            current.append(ch)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


# Every character either splitter treats specially, a few ordinary ones, and non-ASCII spaces.
ALPHABET = "ab*:(),\\ \t\n\u00a0\u3000\u2028x-"


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14))) for _ in range(count)]


def test_equals_both_old_splitters_on_text_without_backslashes() -> None:
    texts = [t.replace("\\", "/") for t in random_texts(60_000, seed=12)]
    for text in texts:
        expected = old_split_rule_list(text)
        assert old_split_outside_parens(text) == expected, repr(text)
        assert split_tool_specs(text) == expected, repr(text)


def test_equals_the_old_rule_splitter_on_text_with_backslashes() -> None:
    texts = [t for t in random_texts(60_000, seed=13) if "\\" in t]
    assert len(texts) > 10_000
    for text in texts:
        assert split_tool_specs(text) == old_split_rule_list(text), repr(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Read,Grep Bash(git status:*), Bash(npm run test)",
         ["Read", "Grep", "Bash(git status:*)", "Bash(npm run test)"]),
        ("Agent(a, b), Read", ["Agent(a, b)", "Read"]),
        ("Bash(echo \\) x), Read", ["Bash(echo \\) x)", "Read"]),  # an escaped ")" closes nothing
        ("Bash(echo \\(), Read", ["Bash(echo \\()", "Read"]),  # nor does an escaped "(" open one
        ("a\\ b, c", ["a\\ b", "c"]),  # an escaped space does not split
        (" ,, \t", []),
        ("Bash(unclosed, Read", ["Bash(unclosed, Read"]),
    ],
)
def test_examples(text: str, expected: list[str]) -> None:
    assert split_tool_specs(text) == expected


def test_an_agent_tool_list_splits_like_a_rule_list() -> None:
    assert parse_tool_list("Bash(echo \\) x), Read") == ["Bash(echo \\) x)", "Read"]
    assert parse_tool_list(["Read, Grep", "Bash(git:*)"]) == ["Read", "Grep", "Bash(git:*)"]
