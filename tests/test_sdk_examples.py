"""Every example in examples/ runs offline, as a subprocess, and prints what its docstring promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

EXPECTED: dict[str, list[str]] = {
    "one_shot.py": ["the suite hums before the merge", "-- success, 1 turn(s)"],
    "conversation.py": ["> Pick a name for a cat", "How about Miso?", "> Why that name?", "Miso is short"],
    "custom_agents.py": [
        "[Agent] file-counter",
        "started local_agent",
        "    [Glob] {'pattern': '**/*.py'}",
        "    There are 2 Python files.",
        "completed: Agent \"Count Python files\" completed",
        "-- result: The file counter found 2 Python files.",
    ],
    "custom_tool.py": [
        "model calls word_count({'text': 'the quick brown fox jumps over the lazy dog'})",
        "tool answers [{'type': 'text', 'text': '9 words'}]",
        "That sentence has 9 words.",
    ],
    "approve_subagent_bash.py": [
        "can_use_tool: shell-helper (a",
        "wants Bash: 'touch build/.checked' -> allow",
        "wants Bash: 'rm -rf build' -> deny",
        "-- result: The helper marked build/ as checked; deleting it was refused.",
        "build/ still exists: True",
        "build/.checked exists: True",
    ],
    "streaming_prompts.py": [
        "> What is 2 + 2?",
        "4  (origin: {'kind': 'human'})",
        "> And times 10?",
        "40  (origin: {'kind': 'human'})",
    ],
    "structured_output.py": [
        "[Glob] {'pattern': '*.py'}",
        "[StructuredOutput] {'file_count': 2, 'has_tests': True}",
        "-- structured_output: {'file_count': 2, 'has_tests': True}",
    ],
}


def test_every_example_is_covered() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(name: str, tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))
    }
    env.update({"CATUI_HOME": str(tmp_path / "catui-home"), "HOME": str(tmp_path / "home")})
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    for line in EXPECTED[name]:
        assert line in done.stdout, f"{name} did not print {line!r}:\n{done.stdout}"
    assert done.stderr == ""
