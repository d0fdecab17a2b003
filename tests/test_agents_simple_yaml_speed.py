"""The fast paths of the nested-frontmatter reader (simple_yaml) against PyYAML and against its own rules.

simple_yaml reads block scalars with one regex search, runs of list items with one match, keys with
``str.partition`` and checks odd characters on UTF-8 bytes. These tests pin each shortcut to what the
real parser (``load_yaml12``) or the rule it replaces says: whenever the reader accepts a text, its
mapping equals PyYAML's; where a construct is subtle, the reader declines (None).
"""

from __future__ import annotations

import random

import pytest
import yaml

from catui.agents.simple_yaml import (
    _ODD_CHARACTERS_RE,
    _has_only_plain_characters,
    analyse_simple_yaml,
    parse_simple_yaml,
)
from catui.agents.yaml12 import load_yaml12


def _yaml(text: str) -> object:
    try:
        return load_yaml12(text)
    except yaml.YAMLError:
        return "error"


def _assert_agrees(text: str) -> bool:
    """Asserts the reader's answer is PyYAML's whenever it gives one; True when it did."""
    fast = parse_simple_yaml(text)
    if fast is None:
        return False
    assert fast == _yaml(text), repr(text)
    return True


def test_odd_character_check_equals_the_regex_on_every_code_point() -> None:
    for code in range(0x110000):
        text = f"k: a{chr(code)}b\n"
        assert _has_only_plain_characters(text) == (_ODD_CHARACTERS_RE.search(text) is None), hex(code)


def test_odd_character_check_reads_whole_texts() -> None:
    assert _has_only_plain_characters("name: a\ndescription: 🛡️ café ✅\n")
    assert not _has_only_plain_characters("name: a\ndescription: 🛡️ x\u2028y\n")
    assert not _has_only_plain_characters("name: a\n\tb: c\n")
    assert _has_only_plain_characters("name: \ud800\n")  # a lone surrogate: the regex lets it through too


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("k: |\n  a\n   b\n\n  c\nn: 1\n", {"k": "a\n b\n\nc\n", "n": 1}),
        ("k: |-\n  a\n\n\nn: x\n", {"k": "a", "n": "x"}),
        ("k: >\n  a\n  b\n\n  c\n", {"k": "a b\nc\n"}),
        ("k: >-\n  a\n\n\n  b\n", {"k": "a\n\nb"}),
        ("k: | # note\n  # not a comment\n", {"k": "# not a comment\n"}),
        ("h:\n  - m: x\n    run: |\n      echo 1\n      echo 2\n  - m: y\n", {"h": [{"m": "x", "run": "echo 1\necho 2\n"}, {"m": "y"}]}),
        ("k: |\r\n  a\r\n\r\n  b\r\nn: 1\r\n", {"k": "a\n\nb\n", "n": 1}),
    ],
)  # fmt: skip
def test_block_scalars(text: str, expected: dict[str, object]) -> None:
    assert parse_simple_yaml(text) == expected == load_yaml12(text)


@pytest.mark.parametrize(
    "text",
    [
        "k: |\n  a\n  b",  # content runs into the end of the text without a line break
        "k: |\n  a\n  \n  b\n",  # a line of spaces only inside the content
        "k: |\n  a\n# comment\n",  # a comment ending the block: chomping left to the parser
        "k: |\n\n  a\n",  # blank line before the content
        "k: |\n",  # header without content
        "k: >\n  a\n    b\n",  # more-indented folded line
        "k: >\n  a \n  b\n",  # trailing space in folded content
        "h:\n  - m: |\n    a\n",  # content not indented past the item's keys
    ],
)
def test_subtle_block_scalars_are_left_to_the_parser(text: str) -> None:
    assert parse_simple_yaml(text) is None


def _block_document(rng: random.Random) -> str:
    lines = ["name: x"]
    for number in range(rng.randint(1, 3)):
        header = rng.choice(["|", "|-", ">", ">-", "|", "|-", "| # c", "|+", ">2"])
        kind = rng.random()
        if kind < 0.4:
            lines.append(f"k{number}: {header}")
            base = 0
        elif kind < 0.7:
            base = rng.choice([2, 4])
            lines += [f"k{number}:", " " * base + "- matcher: x", " " * (base + 2) + f"run: {header}"]
            base += 2
        else:
            base = rng.choice([1, 2])
            lines += [f"k{number}:", " " * base + f"sub: {header}"]
        width = base + rng.choice([1, 2, 4])
        folded = header.startswith(">")
        for position in range(rng.randint(1, 8)):
            roll = rng.random()
            if position and roll < 0.12:
                lines.append("")
            elif position and roll < 0.14:
                lines.append(" " * rng.randint(1, width + 2))
            else:
                indent = width + (rng.choice([0, 0, 0, 1, 2]) if roll < 0.9 and not folded else 0)
                content = rng.choice(["echo hi", "a: b", "- x", "# c", "é ✅", "'q'", "x "])
                lines.append(" " * indent + (content.strip() if folded and roll < 0.95 else content))
        lines.append(
            rng.choice(["", "# trailing", " " * base + "other: v", "model: m", "model: m", "tools: [a]"])
        )
    text = "\n".join(lines) + rng.choice(["\n", "\n", "\n\n", ""])
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def test_generated_block_scalars_agree_with_yaml() -> None:
    rng = random.Random(11)
    accepted = sum(_assert_agrees(_block_document(rng)) for _ in range(3000))
    assert accepted > 500


def test_list_items_agree_with_yaml() -> None:
    """Runs of simple items (one match) and the items that end them (comments, typed, quoted, mappings)."""
    atoms = [
        "Read", "a b", '"q"', "'q'", '"a: b"', "'#x'", "12", "1.5", "true", "null", "~", "x # c", '"q" # c',
        "k: v", "a:b", "-x", "[a]", "café", '"e\\"x"', "'it''s'", '""', "a #b", "v1.2.3",
    ]  # fmt: skip
    rng = random.Random(5)
    accepted = 0
    for _ in range(3000):
        lines = ["name: x", "tools:"]
        for _ in range(rng.randint(1, 8)):
            roll = rng.random()
            if roll < 0.1:
                lines.append(rng.choice(["", "  # note", "# note"]))
            else:
                lines.append("  - " + rng.choice(atoms) + rng.choice(["", "", " ", "  "]))
        lines.append(rng.choice(["model: m", "", "  - last"]))
        accepted += _assert_agrees("\n".join(lines) + rng.choice(["\n", ""]))
    assert accepted > 500


def test_remembered_keys_still_refuse_duplicates_and_typed_keys() -> None:
    assert parse_simple_yaml("name: a\ntools: b\n") == {"name": "a", "tools": "b"}
    assert parse_simple_yaml("name: a\nname: b\n") is None  # duplicate key: a YAML error
    assert parse_simple_yaml("name: a\n1: b\n") is None  # a number key
    assert parse_simple_yaml("name: a\ntrue: b\n") is None
    assert parse_simple_yaml("name: a\nx y: b\n") is None
    assert parse_simple_yaml("name: a\n-x: b\n") is None


def test_colon_values_are_reported_only_at_the_top_level() -> None:
    assert analyse_simple_yaml("name: a\ndescription: Example: hi\n") == (
        {"name": "a", "description": "Example: hi"},
        True,
    )
    assert analyse_simple_yaml("m:\n  d: Example: hi\n") == (None, False)
    assert parse_simple_yaml("name: a\ndescription: Example: hi\n") is None
