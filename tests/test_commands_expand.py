"""Custom commands' expansion, piece by piece, as Claude Code 2.1.92 was observed to expand them.

Each row's expectation is what the real Claude Code sent the model for the same body and arguments
(run against the loopback server; docs/commands.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catui.commands.discovery import command_files, first_line_description, load_command_folder
from catui.commands.expand import file_references, shell_snippets, split_arguments, substitute_arguments
from catui.commands.prompt import command_header, command_text, parse_command_line


@pytest.mark.parametrize(("body", "args", "expected"), [
    ("Greet $ARGUMENTS warmly. First $1, second $2.\n", "Alice happy", "Greet Alice happy warmly. First happy, second .\n"),
    ("After $0 $ARGUMENTS[1] $5.", '"a b" c', "After a b c ."),
    ("Do the thing.\n", "Bob sad", "Do the thing.\n\n\nARGUMENTS: Bob sad"),
    ("Do the thing.\n", "", "Do the thing.\n"),
    ("Args: $ARGUMENTS\n", " zz  yy", "Args:  zz  yy\n"),
    ("Keep $ARGUMENTS", None, "Keep $ARGUMENTS"),
    ("Price $10x stays, $1 goes", "a b", "Price $10x stays, b goes"),
    ("Unbalanced $0 and $1", "it's fine", "Unbalanced it's and fine"),
])
def test_arguments_are_substituted_as_claude_code_does(body: str, args: str | None, expected: str) -> None:
    assert substitute_arguments(body, args) == expected


def test_arguments_split_like_a_shell() -> None:
    assert split_arguments('"a b" c') == ["a b", "c"]
    assert split_arguments("   ") == []
    assert split_arguments("it's open") == ["it's", "open"]


def test_shell_snippets_are_fenced_blocks_and_inline_marks_after_white_space() -> None:
    text = "Before\n```!\nprintf 'x'\n```\nAlso inline!`echo no` and !`echo yes`\n!`pwd`"
    assert [command for _pattern, command in shell_snippets(text)] == ["printf 'x'", "echo yes", "pwd"]


def test_file_references_plain_and_quoted() -> None:
    text = 'See @notes.txt, then @"my file.md" and mail@example.com and @src/a.py.'
    assert file_references(text) == ["my file.md", "notes.txt", "src/a.py"]


def test_command_lines_and_the_header() -> None:
    assert parse_command_line("/greet Alice happy") == ("greet", "Alice happy")
    assert parse_command_line("/ns:deep  zz  yy ") == ("ns:deep", " zz  yy")
    assert parse_command_line("/usr/bin/env python") is None
    assert parse_command_line("hello /greet") is None
    assert command_header("greet", "Alice") == ("<command-message>greet</command-message>\n"
                                                "<command-name>/greet</command-name>\n<command-args>Alice</command-args>\n")


def test_the_command_text_of_a_string_or_of_content_blocks() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
    assert command_text("/greet Ada") == ("/greet Ada", [])
    assert command_text([{"type": "text", "text": "/greet Ada"}]) == ("/greet Ada", [])
    assert command_text([image, {"type": "text", "text": "/greet Ada"}]) == ("/greet Ada", [image])
    assert command_text([{"type": "text", "text": "/greet Ada"}, image]) is None  # only the last block counts
    assert command_text([]) is None and command_text(None) is None


def test_subfolders_are_namespaces_and_descriptions_fall_back_to_the_first_line(tmp_path: Path) -> None:
    folder = tmp_path / "commands"
    (folder / "git" / "deep").mkdir(parents=True)
    (folder / "review.md").write_text("---\ndescription: Review it\nargument-hint: <file>\n"
                                      "allowed-tools: Bash(git diff:*), Read\nmodel: inherit\n---\nReview $ARGUMENTS\n")
    (folder / "git" / "commit.md").write_text("# Commit the staged work\n\nWrite a message.\n")
    (folder / "git" / "deep" / "x.md").write_text("\n\n" + "y" * 120 + "\n")
    (folder / "notes.txt").write_text("not a command")
    (folder / "broken.md").write_text("---\nkey: \"unterminated\n---\nbody\n")
    assert [name for name, _path in command_files(folder)] == ["broken", "review", "git:commit", "git:deep:x"]
    load = load_command_folder(folder, "projectSettings")
    by_name = {c.name: c for c in load.skills}
    assert set(by_name) == {"review", "git:commit", "git:deep:x"}
    review = by_name["review"]
    assert (review.kind, review.description, review.argument_hint, review.allowed_tools, review.model) == (
        "command", "Review it", "<file>", ("Bash(git diff:*)", "Read"), None)
    assert by_name["git:commit"].description == "Commit the staged work" and not by_name["git:commit"].has_description
    assert by_name["git:deep:x"].description == "y" * 97 + "..."
    assert [Path(f.path).name for f in load.failed_files] == ["broken.md"]
    assert first_line_description("") is None
