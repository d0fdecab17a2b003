"""The Markdown loader's rules (frontmatter, YAML quirks, fields) and bad input on disk."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from catui.agents.frontmatter import parse_markdown
from catui.agents.markdown import MAX_AGENT_FILE_BYTES, load_markdown_agent
from catui.agents.registry import AgentRegistry, load_agent_registry

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def load(text: str):  # type: ignore[no-untyped-def]
    return load_markdown_agent(text, path="/p/agent.md", source="projectSettings")


def agent_file(name: str = "a", description: str = "Does a", extra: str = "", body: str = "Prompt.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n"


# -- frontmatter -----------------------------------------------------------------------------------


def test_basic_file() -> None:
    result = load(agent_file(extra="tools: Read, Grep\nmodel: haiku\n", body="You are A.\n\nBe brief."))
    agent = result.definition
    assert agent is not None and result.error is None
    assert (agent.agent_type, agent.description, agent.tools, agent.model) == (
        "a",
        "Does a",
        ["Read", "Grep"],
        "haiku",
    )
    assert agent.get_system_prompt() == "You are A.\n\nBe brief."
    assert agent.filename == "agent" and agent.source == "projectSettings"


def test_utf8_bom_is_handled_deliberately_unlike_claude_code() -> None:
    """Deliberate difference: Claude Code's regex needs '---' at byte 0, so a BOM hides the agent
    (anthropics/claude-code#73158, a reported bug). Editors add BOMs invisibly; catui strips it."""
    text = "\ufeff" + agent_file()
    assert parse_markdown(text, strip_bom=False).status == "no_frontmatter"  # Claude Code's behaviour
    result = load(text)
    assert result.definition is not None and result.definition.agent_type == "a"
    assert any("byte-order mark" in w.message for w in result.warnings)


def test_bom_on_a_real_corpus_file() -> None:
    path = CORPUS / "agents/wshobson__agents/plugins/agent-teams/agents/team-lead.md"
    if not path.is_file():
        pytest.skip("corpus not available")
    result = load("\ufeff" + path.read_text(encoding="utf-8"))
    assert result.definition is not None and result.definition.agent_type == "team-lead"


def test_crlf_line_endings() -> None:
    text = agent_file(extra="tools: Read\n", body="Line one.\nLine two.").replace("\n", "\r\n")
    agent = load(text).definition
    assert agent is not None and agent.tools == ["Read"] and agent.description == "Does a"
    assert agent.get_system_prompt() == "Line one.\nLine two."


def test_block_ends_at_the_first_triple_dash_anywhere() -> None:
    parsed = parse_markdown("---\nname: a\ndescription: before---after\nmore\n")
    assert parsed.frontmatter == {"name": "a", "description": "before"}
    assert parsed.body == "after\nmore\n"


def test_frontmatter_must_start_the_file() -> None:
    result = load("\n" + agent_file())
    assert result.definition is None and result.not_an_agent
    assert result.warnings and "frontmatter" in result.warnings[0].message


def test_colon_space_in_description_is_rescued_by_the_quote_retry() -> None:
    text = agent_file(description='Use it. Example: user: "hi" assistant: ok')
    parsed = parse_markdown(text)
    assert parsed.status == "ok_after_quote_retry"
    agent = load(text).definition
    assert agent is not None and agent.description == 'Use it. Example: user: "hi" assistant: ok'


def test_hash_values_are_prequoted_not_cut_at_a_comment() -> None:
    agent = load(agent_file(description="Fix issue #12 quickly")).definition
    assert agent is not None and agent.description == "Fix issue #12 quickly"


def test_flow_list_with_a_trailing_comment_stays_a_list() -> None:
    agent = load(agent_file(extra="tools: [Read, Grep]  # read-only\n")).definition
    assert agent is not None and agent.tools == ["Read", "Grep"]


def test_yaml_12_scalars_are_strings() -> None:
    """YAML 1.1 (plain PyYAML) would turn these into booleans/dates and drop the agent."""
    agent = load(agent_file(name="on", description="yes", extra="model: off\n")).definition
    assert agent is not None
    assert (agent.agent_type, agent.description, agent.model) == ("on", "yes", "off")
    date = load(agent_file(description="2024-01-01")).definition
    assert date is not None and date.description == "2024-01-01"


def test_literal_backslash_n_in_description_becomes_a_newline() -> None:
    agent = load(agent_file(description=r"First.\n\nSecond.")).definition
    assert agent is not None and agent.description == "First.\n\nSecond."


def test_broken_yaml_reports_the_line() -> None:
    result = load("---\nname: a\ndescription: ok\ntools:\n  - Read\n - Grep\n---\nbody\n")
    assert result.definition is None
    assert result.error is not None and "not valid YAML" in result.error and "line " in result.error


def test_frontmatter_that_is_not_a_mapping() -> None:
    result = load("---\n- a\n- b\n---\nbody\n")
    assert result.definition is None and result.error and "mapping" in result.error


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("---\ndescription: d\n---\nbody\n", "'name'"),
        ("---\nname: 123\ndescription: d\n---\nbody\n", "must be a string"),
        ('---\nname: "a\\tb"\ndescription: d\n---\nbody\n', "control characters"),
        ("---\nname: a\n---\nbody\n", "'description'"),
        ("---\nname: a\ndescription: [1, 2]\n---\nbody\n", "'description'"),
    ],
)
def test_required_fields(text: str, fragment: str) -> None:
    result = load(text)
    assert result.definition is None and result.error is not None and fragment in result.error


def test_tools_edge_values() -> None:
    assert load(agent_file(extra="tools: []\n")).definition.tools == []  # type: ignore[union-attr]
    assert load(agent_file(extra="tools:\n")).definition.tools == []  # type: ignore[union-attr]
    assert load(agent_file()).definition.tools is None  # type: ignore[union-attr]
    assert load(agent_file(extra="tools: '*'\n")).definition.tools is None  # type: ignore[union-attr]
    mapping = load(agent_file(extra="tools:\n  read: true\n"))
    assert mapping.definition is not None and mapping.definition.tools == []
    assert any("mapping" in w.message for w in mapping.warnings)
    agent = load(agent_file(extra="disallowedTools: Write, Edit\n")).definition
    assert agent is not None and agent.disallowed_tools == ["Write", "Edit"]


def test_optional_fields_are_read_and_bad_values_warned() -> None:
    extra = (
        "model: fable\ncolor: '#4CAF50'\neffort: high\npermissionMode: plan\nmaxTurns: 7\n"
        "background: true\nmemory: project\nisolation: worktree\nskills: a, b\n"
        "initialPrompt: go\nhooks:\n  PreToolUse: []\ncategory: misc\nallowedTools: Read\n"
    )
    result = load(agent_file(extra=extra))
    agent = result.definition
    assert agent is not None
    assert agent.model == "fable" and agent.color is None
    assert (agent.effort, agent.permission_mode, agent.max_turns) == ("high", "plan", 7)
    assert (agent.background, agent.memory, agent.isolation) == (True, "project", "worktree")
    assert agent.skills == ["a", "b"] and agent.initial_prompt == "go" and agent.hooks == {"PreToolUse": []}
    assert agent.extra_fields == {"category": "misc", "allowedTools": "Read"}
    messages = " | ".join(w.message for w in result.warnings)
    assert "unknown model 'fable'" in messages
    assert "#4CAF50" in messages
    assert "did you mean 'tools'" in messages and "ALL tools" in messages


def test_claude_flow_hooks_shape_is_ignored_with_a_warning() -> None:
    result = load(agent_file(extra="hooks:\n  pre: echo hi\n  post: echo bye\n"))
    assert result.definition is not None and result.definition.hooks is None
    assert any("hooks" in w.message for w in result.warnings)


# -- bad input on disk -----------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".git").mkdir()
    return root


def registry_for(project: Path) -> AgentRegistry:
    return load_agent_registry(project, home=project.parent / "home")


def failure(registry: AgentRegistry, name: str) -> str:
    matches = [f.error for f in registry.failed_files if Path(f.path).name == name]
    assert matches, f"{name} not in failed_files: {registry.failed_files}"
    return matches[0]


def test_bad_files_never_crash_and_are_never_silently_missing(project: Path) -> None:
    agents = project / ".claude" / "agents"
    (agents / "good.md").write_text(agent_file(name="good"), encoding="utf-8")
    (agents / "empty.md").write_text("", encoding="utf-8")
    (agents / "latin1.md").write_bytes(agent_file(name="caf\xe9").encode("latin-1"))
    (agents / "huge.md").write_text(agent_file(name="huge", body="x" * (MAX_AGENT_FILE_BYTES + 10)))
    (agents / "README.md").write_text("# My agents\n", encoding="utf-8")
    (agents / "broken.md").write_text("---\nname: broken\ndescription: d\ntools:\n  - Read\n - Grep\n---\n")
    folder = agents / "folder.md"
    folder.mkdir()
    (folder / "inner.md").write_text(agent_file(name="inner"), encoding="utf-8")
    os.symlink(agents, agents / "loop")
    os.symlink(agents / "missing-target.md", agents / "dangling.md")

    registry = registry_for(project)
    names = registry.names()
    assert "good" in names and "inner" in names
    assert "empty" in failure(registry, "empty.md")
    assert "UTF-8" in failure(registry, "latin1.md")
    assert "limit" in failure(registry, "huge.md") or "limited" in failure(registry, "huge.md")
    assert "YAML" in failure(registry, "broken.md")
    warnings = {Path(w.path or "").name: w.message for w in registry.warnings}
    assert "not an agent definition" in warnings["README.md"]
    assert "folder named like an agent file" in warnings["folder.md"]
    assert "loop" in warnings["loop"]
    assert "broken symbolic link" in warnings["dangling.md"]


def test_duplicate_names_in_one_scope_are_reported_and_the_later_file_wins(project: Path) -> None:
    agents = project / ".claude" / "agents"
    (agents / "a-first.md").write_text(agent_file(name="dup", body="first"), encoding="utf-8")
    (agents / "b-second.md").write_text(agent_file(name="dup", body="second"), encoding="utf-8")
    registry = registry_for(project)
    assert registry.get("dup").get_system_prompt() == "second"  # type: ignore[union-attr]
    duplicate = [w for w in registry.warnings if "again" in w.message]
    assert len(duplicate) == 1
    assert duplicate[0].path is not None and duplicate[0].path.endswith("b-second.md")
    assert "a-first.md" in duplicate[0].message


def test_unknown_tool_names_are_kept_and_warned(project: Path) -> None:
    (project / ".claude" / "agents" / "t.md").write_text(
        agent_file(name="t", extra="tools: Read, psql, mcp__db__query, Agent(x)\n"), encoding="utf-8"
    )
    registry = registry_for(project)
    agent = registry.get("t")
    assert agent is not None and agent.tools == ["Read", "psql", "mcp__db__query", "Agent(x)"]
    unknown = [w.message for w in registry.warnings if "unknown tools" in w.message]
    assert unknown == [unknown[0]] and "psql" in unknown[0] and "mcp__" not in unknown[0]


# -- the fast path for simple frontmatter agrees with the YAML parser ------------------------------

TRICKY_FRONTMATTER = [
    "name: a\ndescription: plain text, with commas [and brackets] {braces} and C# too\n",
    'name: a\ndescription: "quoted: with colon # and hash"\n',
    "name: a\ndescription: 'single ''quoted'''\n",
    'name: a\ndescription: "escaped \\" quote and \\\\ backslash"\n',
    'name: a\ndescription: "other escape \\n here"\n',
    "name: a\ntools:\n  - Read\n  - Grep\n",
    "name: a\ntools:\n  - Read\n    - Grep\n",
    "name: a\ntools:\n- Read\n- Grep\n",
    "name: a\ntools: [Read, 'Grep', \"Glob\"]\n",
    "name: a\ntools: [a: b]\n",
    "name: a\nmaxTurns: 007\nversion: 1.0\nratio: .5\nhex: 0x1f\noct: 0o17\nneg: -3\n",
    "name: a\nflag: true\nother: False\nnothing: ~\nalso: null\nempty:\n",
    "name: a\nname: b\n",
    "true: x\n1: y\nnull: z\n",
    "name: a\ndescription: ends with colon:\n",
    "name: a\ndescription: multi\n  line plain\n",
    "name: a\ndescription: |\n  block\n",
    "name: a # comment\n",
    "name: a\r\ndescription: crlf\r\n",
    "name: a\ndescription: tab\there\n",
    "name: a\ndescription: Example: user: hi\ntools: [Read, Grep]\n",
    "name: a\ndescription: Example: user: hi\nmodel: sonnet\n",
    "name: café\ndescription: 日本語の説明: です\n",
    "name: a\ndescription: nel\x85inside\n",
    "name: a\ndescription: lone\rreturn\nmodel: x\n",
    "name: a\ndescription: non-character\ufffe\n",
    "name: a\ndescription: |\n  line one\n\n  line three\n    indented\n\n\nmodel: x\n",
    "name: a\ndescription: |-\n  kept\n  lines\n",
    "name: a\ndescription: >\n  folded\n  text\n\n  para\n",
    "name: a\ndescription: >-\n  folded\n    more indented\n",
    "name: a\ndescription: >\n  trailing space \n  next\n",
    "name: a\ndescription: |+\n  keep\n\n",
    "name: a\ndescription: |2\n    indicator\n",
    "name: a\ndescription: |\n\n  leading blank\n",
    "name: a\ndescription: |\n  last line without newline",
    "name: a\ndescription: |\n  x\n   \n  y\n",
    "name: a\ndescription: |\n    deep\n  shallow\n",
    "hooks:\n  pre: |\n    echo one\n    echo two\n  post: echo done\nname: a\n",
    "hooks:\n  pre:\n    - a\n    - b\n  post: x\n",
    "hooks:\n  pre: a\n   post: b\n",
    "nested:\n  deeper:\n    deepest: 1\n  back: 2\n",
    "version: 1.0\nratio: 2.5e3\nneg: -0.25\ntext: 1_000\ndot: 1.\n",
    "name: a\ndescription: Example: user: hi\nhooks:\n  pre: x\n",
    "name: a\n  description: indented key\n",
    "tools:\n- a\n- b\n",
]


def _frontmatters() -> list[str]:
    import json

    from catui.agents.frontmatter import FRONTMATTER_RE

    texts = list(TRICKY_FRONTMATTER)
    expectations = CORPUS / "expectations.json"
    if expectations.is_file():
        for entry in json.loads(expectations.read_text(encoding="utf-8")):
            match = FRONTMATTER_RE.match((CORPUS / entry["path"]).read_text(encoding="utf-8"))
            if match:
                texts.append(match.group(1))
    return texts


def test_fast_path_agrees_with_yaml_on_corpus_and_tricky_input() -> None:
    import yaml

    from catui.agents.frontmatter import prequote_hash_values, quote_problematic_values
    from catui.agents.simple_yaml import fails_only_on_colon_values, parse_simple_yaml
    from catui.agents.yaml12 import load_yaml12

    checked = 0
    for raw in _frontmatters():
        for text in {raw, prequote_hash_values(raw), quote_problematic_values(raw)}:
            try:
                expected: object = load_yaml12(text)
            except yaml.YAMLError:
                expected = "error"
            fast = parse_simple_yaml(text)
            if fast is not None:
                checked += 1
                assert fast == expected, text
            if fails_only_on_colon_values(text):
                assert expected == "error", text
    # The corpus (../shared/corpus) is not part of a fresh clone; the tricky inputs alone still exercise it.
    assert checked > (300 if (CORPUS / "expectations.json").is_file() else 20)


def test_duplicate_keys_are_a_yaml_error_as_in_claude_code() -> None:
    result = load("---\nname: a\ndescription: one\ndescription: two\n---\nbody\n")
    assert result.definition is None and result.error is not None and "duplicate key" in result.error


def test_find_frontmatter_equals_claude_codes_regex() -> None:
    """The string-search version must agree with the regex on real files and on random fragments."""
    import random

    from catui.agents.frontmatter import FRONTMATTER_RE, find_frontmatter

    texts = [agent_file(), "---\n---\n", "---\r\n\r\nname: a\r\n---\r\n", "--- \n a---b---\n\n\nbody"]
    if CORPUS.is_dir():
        texts += [p.read_text(encoding="utf-8") for p in sorted((CORPUS / "agents").rglob("*.md"))[:200]]
    rng = random.Random(7)
    alphabet = ["-", "-", "-", "\n", "\r", " ", "a", ":", "\t", "\u2028", "\ufeff", "\u3000"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(20000)]
    for text in texts:
        match = FRONTMATTER_RE.match(text)
        assert find_frontmatter(text) == ((match.group(1), match.end()) if match else None), repr(text)


_FUZZ_KEYS = ["name", "description", "tools", "model", "x-y", "k_1", "true", "null", "1", "on"]
_FUZZ_ATOMS = [
    "Read", "a b", "a: b", "a #b", "a#b", "'q'", '"dq"', '"e\\"x"', '"bs\\\\"', '"n\\n"', "[a, b]", "[]",
    "[a, [b]]", "|", "|-", ">", ">-", "|+", "", "~", "null", "true", "False", "yes", "on", "12", "-3", "1.5",
    "0x1f", "0o7", ".5", "-", "- x", "a:", ":a", "{a: 1}", "*ref", "&anc x", "!tag x", "@x", "`x`", "a\"b",
    "it's", "café", "a,b", "1e3", "1_0", "...", "---",
    "1.0.0", "2.0.0-alpha.1", "1.", "-1.5.2", "x # c", "'q' # c", '"dq"  # c', "'a #b'", '"a" x',
    "'it''s' # c", "[a, b] # c", "# c", "k: v", "k: v # c", "a: b: c", "'x'#c",
]  # fmt: skip
_FUZZ_COMMENTS = ["# note", "  # note", "    #", "#"]


def _fuzz_frontmatter(rng: random.Random) -> str:
    lines: list[str] = []
    for _ in range(rng.randint(1, 5)):
        value = rng.choice([*_FUZZ_ATOMS, "", ""])
        lines.append(f"{rng.choice(_FUZZ_KEYS)}: {value}" if value else f"{rng.choice(_FUZZ_KEYS)}:")
        width = rng.choice(["  ", "    ", ""])
        if value in ("|", ">", "|-", ">-", "|+"):
            choices = [
                width + "text a",
                width + "text b ",
                width + "  more",
                "",
                width + "a: b",
                " " * rng.randint(1, 5),
            ]
            lines.extend(rng.choice(choices) for _ in range(rng.randint(1, 4)))
        elif not value:
            as_list = rng.random() < 0.5
            for _ in range(rng.randint(0, 3)):
                atom = rng.choice(_FUZZ_ATOMS)
                lines.append(f"{width}- {atom}" if as_list else f"{width}{rng.choice(_FUZZ_KEYS)}: {atom}")
                if as_list and rng.random() < 0.3:  # more keys of a "- key: value" item's mapping
                    lines.append(f"{width}{rng.choice(['  ', ' ', '   '])}{rng.choice(_FUZZ_KEYS)}: {rng.choice(_FUZZ_ATOMS)}")
        if rng.random() < 0.3:
            lines.append(rng.choice(_FUZZ_COMMENTS))
    text = "\n".join(lines) + ("\n" if rng.random() < 0.9 else "")
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def test_fast_path_agrees_with_yaml_on_generated_input() -> None:
    """Differential check of the simple reader against PyYAML (YAML 1.2 rules) on generated frontmatter."""
    import yaml

    from catui.agents.simple_yaml import fails_only_on_colon_values, parse_simple_yaml
    from catui.agents.yaml12 import load_yaml12

    rng = random.Random(2026)
    fast = 0
    for _ in range(6000):
        text = _fuzz_frontmatter(rng)
        try:
            expected = load_yaml12(text)
        except yaml.YAMLError:
            expected = "error"
        got = parse_simple_yaml(text)
        if got is not None:
            fast += 1
            assert got == (expected if expected is not None else {}), repr(text)
        if fails_only_on_colon_values(text):
            assert expected == "error", repr(text)
    assert fast > 300


_NESTED_ATOMS = [
    "Read", "a b", "1.0.0", "12", "true", "~", "'q'", '"dq"', "x # c", '"dq" # c', "[a, b]", "[a] # c",
    "a: b", "café", "v1.2", "0x1f", "", "# c",
]  # fmt: skip


def _fuzz_nested_frontmatter(rng: random.Random) -> str:
    """Mostly valid YAML: lists of scalars and of "- key: value" mappings, with comments between."""
    lines = ["name: x"]
    for key in rng.sample(["tools", "hooks", "capabilities", "k_1"], rng.randint(1, 3)):
        lines.append(f"{key}:" + rng.choice(["", "", " # note"]))
        width = rng.choice([2, 4])
        for _ in range(rng.randint(1, 4)):
            pad = " " * width
            if rng.random() < 0.5:
                lines.append(f"{pad}- {rng.choice(_NESTED_ATOMS)}".rstrip())
            else:
                lines.append(f"{pad}- {rng.choice(['k', 'matcher', 'ADR-1', '1'])}: {rng.choice(_NESTED_ATOMS)}".rstrip())
                for _ in range(rng.randint(0, 2)):
                    inner = " " * (width + rng.choice([2, 2, 2, 1, 3]))
                    if rng.random() < 0.3:
                        lines.append(f"{inner}run:")
                        lines.append(f"{inner}{rng.choice(['  ', ''])}- {rng.choice(_NESTED_ATOMS)}".rstrip())
                    else:
                        lines.append(f"{inner}{rng.choice(['x', 'k', 'y'])}: {rng.choice(_NESTED_ATOMS)}".rstrip())
            if rng.random() < 0.2:
                lines.append(" " * rng.choice([0, width, width + 2]) + "# note")
    return "\n".join(lines) + "\n"


def test_fast_path_agrees_with_yaml_on_nested_lists_and_comments() -> None:
    """The same differential check, aimed at "- key: value" list items and comment lines."""
    import yaml

    from catui.agents.simple_yaml import parse_simple_yaml
    from catui.agents.yaml12 import load_yaml12

    rng = random.Random(4)
    fast = with_mapping_items = 0
    for _ in range(3000):
        text = _fuzz_nested_frontmatter(rng)
        try:
            expected = load_yaml12(text)
        except yaml.YAMLError:
            expected = "error"
        got = parse_simple_yaml(text)
        if got is not None:
            fast += 1
            with_mapping_items += any(
                isinstance(value, list) and any(isinstance(item, dict) for item in value) for value in got.values()
            )
            assert got == expected, repr(text)
    assert fast > 200 and with_mapping_items > 100


def test_plain_frontmatter_does_not_import_the_yaml_parser(tmp_path: Path) -> None:
    """Start-up: the full YAML parser (PyYAML, ~10 ms to import) is loaded only for frontmatter that needs it."""
    import subprocess
    import sys

    folder = tmp_path / "proj" / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text(
        "---\nname: a\ndescription: d  # not a comment\ntools: [Read, Grep]  # note\nhooks:\n"
        "  - matcher: x\n    run: |\n      echo hi\n---\nbody\n"
    )
    (folder / "b.md").write_text("---\nname: b\ndescription: Example: user: hi\n---\nbody\n")
    code = (
        "import sys; from catui.agents.registry import load_agent_registry; "
        f"r = load_agent_registry({str(tmp_path / 'proj')!r}, home={str(tmp_path / 'home')!r}); "
        "print(sorted(a.agent_type for a in r.all if not a.is_built_in), r.failed_files, 'yaml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "['a', 'b'] [] False"


# -- the flat-frontmatter reader (agents/flat_yaml.py) against the YAML route ------------------------


def _flat_route(raw: str) -> tuple[object, bool] | None:
    from catui.agents.flat_yaml import read_flat_frontmatter
    from catui.agents.frontmatter import prequote_hash_values

    return read_flat_frontmatter(prequote_hash_values(raw))


def _yaml_route(raw: str) -> tuple[object, bool]:
    """What the general route gives for ``raw``: (mapping or "error", whether the quote-retry was needed).

    Claude Code's steps with PyYAML only: quote `` #`` values, parse, and on failure quote values with
    special characters and parse again.
    """
    import yaml

    from catui.agents.frontmatter import prequote_hash_values, quote_problematic_values
    from catui.agents.yaml12 import load_yaml12

    prequoted = prequote_hash_values(raw)
    try:
        data, retried = load_yaml12(prequoted), False
    except yaml.YAMLError:
        try:
            data, retried = load_yaml12(quote_problematic_values(prequoted)), True
        except yaml.YAMLError:
            return "error", False
    if data is None:
        data = {}
    return (data if isinstance(data, dict) else "not a mapping"), retried


_FLAT_KEYS = ["name", "description", "tools", "model", "x-y", "k_1", "_k", "true", "null", "Null", "on", "a b"]  # fmt: skip
_FLAT_VALUES = [
    "Read", "a b", "Read, Grep", "a: b", "Example: user: hi", "a #b", "C#", "a#b", "x:", "a:b", "'q'", "''",
    '"dq"', '""', '"e\\"x"', '"bs\\\\"', '"n\\n"', '"a #b"', "'a #b'", "'it''s'", '"a" x', "'a' # c",
    "[a, b]", "[]", "[ ]", "[a,]", "[a,,b]", '["Read", "Grep"]', "['a', \"b\"]", '["a, b"]', "[a, [b]]",
    "[a: b]", "[1, true, ~, 1.5, x]", '["a"] # c', "[a] x", "{a: 1}", "|", ">-", "~", "null", "true",
    "False", "yes", "12", "-3", "+4", "1.5", ".5", "1e3", "0x1f", "0o7", ".inf", ".NaN", "1.0.0", "007",
    "-", "-x", "?x", ":x", ",x", "*ref", "&anc x", "!tag x", "%x", "@x", "`x`", "café ✍️", "日本: 語",
    "tab\there", "nel\x85x", "bad\ufffe", "\u00a0lead", "trail\u00a0", "trail  ", "a: b  ", "{x}",
    "a [b] {c}", "a | b > c", "100%", "e@mail", "back\\slash", "\"unterminated", "'unterminated",
]  # fmt: skip


def _flat_frontmatter(rng: random.Random) -> str:
    lines: list[str] = []
    for _ in range(rng.randint(1, 6)):
        # Mostly lines the reader accepts, so that whole blocks often do; the rest probe its limits.
        common = rng.random() < 0.85
        key = rng.choice(_FLAT_KEYS[:6] if common else _FLAT_KEYS)
        separator = ": " if common else rng.choice([":  ", ":", ":\t"])
        value = rng.choice(_FLAT_VALUES[:50] if common else _FLAT_VALUES)
        lines.append(f"{key}{separator}{value}")
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "", "# note", "  ", "  - x"]))
    text = "\n".join(lines) + rng.choice(["\n", "\n", "\n", "", "\n\n"])
    return text.replace("\n", "\r\n") if rng.random() < 0.05 else text


def test_flat_reader_agrees_with_the_yaml_route_on_generated_input() -> None:
    """Every block the flat reader accepts reads as the YAML route reads it, quote-retry included."""
    rng = random.Random(1234)
    accepted = retried = 0
    for _ in range(8000):
        text = _flat_frontmatter(rng)
        got = _flat_route(text)
        if got is None:
            continue
        accepted += 1
        retried += got[1]
        assert got == _yaml_route(text), repr(text)
    assert accepted > 800 and retried > 100, (accepted, retried)


def test_flat_reader_agrees_with_the_yaml_route_on_corpus_and_tricky_input() -> None:
    accepted = 0
    for raw in _frontmatters():
        got = _flat_route(raw)
        if got is not None:
            accepted += 1
            assert got == _yaml_route(raw), raw
    assert accepted > (300 if (CORPUS / "expectations.json").is_file() else 5)


def test_parse_markdown_takes_the_flat_path_with_the_same_statuses() -> None:
    flat = parse_markdown("---\nname: a\ndescription: Example: user: hi\ntools: [Read]\n---\nbody\n")
    assert (flat.frontmatter, flat.status, flat.body) == (
        {"name": "a", "description": "Example: user: hi", "tools": "[Read]"},
        "ok_after_quote_retry",
        "body\n",
    )
    hashed = parse_markdown('---\nname: a\ndescription: Fix "#1" #2: now\n---\n')
    assert (hashed.frontmatter, hashed.status) == ({"name": "a", "description": 'Fix "#1" #2: now'}, "ok_hash_prequoted")
    plain = parse_markdown('---\nname: a\ndescription: "x"\ntools: ["Read", Grep]\nmaxTurns: 3\n---\n')
    assert (plain.frontmatter, plain.status) == (
        {"name": "a", "description": "x", "tools": ["Read", "Grep"], "maxTurns": 3},
        "ok",
    )


# -- the bytes path (load_markdown_agent_bytes) against decoding the whole file ----------------------


def _outcome(load):  # type: ignore[no-untyped-def]
    from catui.agents.markdown import AgentFileError

    try:
        result = load()
    except AgentFileError as exc:
        return ("unreadable", str(exc))
    definition = result.definition
    fields = None if definition is None else {k: v for k, v in definition.__dict__.items()}
    return fields, result.error, [w.to_dict() for w in result.warnings], result.not_an_agent


def _same_either_way(data: bytes) -> bool:
    """True when the bytes path took its shortcut; asserts it matches decoding the text first."""
    from catui.agents.markdown import (
        _split_plain_file,
        decode_agent_file,
        load_markdown_agent,
        load_markdown_agent_bytes,
    )

    options = {"path": "/p/dir/agent.md", "source": "projectSettings", "base_dir": "/p"}
    got = _outcome(lambda: load_markdown_agent_bytes(data, **options))
    expected = _outcome(lambda: load_markdown_agent(decode_agent_file(data), **options))
    assert got == expected, data
    return _split_plain_file(data) is not None


def test_bytes_path_equals_the_text_path_on_edge_cases_and_mutations() -> None:
    cases = [
        agent_file().encode(),
        agent_file(body="\n\n  Prompt with edges.\t\n\n").encode(),
        agent_file(body="\u3000Ideographic space first\u3000").encode(),
        agent_file(body="\x1c\x1dseparators\x1e\x1f").encode(),
        agent_file(body="ends with an emoji 🚀").encode(),
        agent_file(body="\r\nCRLF body\r\nline two\r\n").encode(),
        agent_file(body="").encode(),
        agent_file(body="\n" * 100 + "far below").encode(),
        agent_file(body="x" + " " * 100).encode(),
        agent_file(description="café ✅").encode(),
        b"---\n---\n",
        b"---\nname: a\ndescription: d\n---",
        b"---\nname: a\ndescription: d\n--- trailing on the line\nbody",
        b"---\n\nname: a\ndescription: d\n---\nbody",
        b"---\n name: a\n---\nbody",
        b"\xef\xbb\xbf---\nname: a\ndescription: d\n---\nbody",
        b"---\nname: a\ndescription: d\xff\n---\nbody",
        b"---\nname: a\ndescription: d\n---\nbody \xc3",
        b"---\nname: a\ndescription: d\n---\n\xc2\xa0body\xc2\xa0",
        b"---\nname: a\ndescription: d\n---\n\xc2\x85body",
        "---\nname: a\ndescription: d\n---\n\n中文开头，中文结尾\n".encode(),
        "---\nname: a\ndescription: d\n---\n\ufeffbody after a BOM".encode(),
        "---\nname: a\ndescription: d\n---\n\u2028body\u2029".encode(),
        "---\nname: a\ndescription: d\n---\nbody\u3000\n".encode(),
        b"---\nname: a\n---\nno description",
        b"plain Markdown, no frontmatter",
        b"",
    ]
    shortcut = sum(_same_either_way(case) for case in cases)
    rng = random.Random(11)
    pieces = [b"\n", b"\r\n", b" ", b"\t", b"\x1c", b"\xc2\xa0", b"\xe3\x80\x80", b"\xff", b"\xc3", b"---", b"\xef\xbb\xbf", "中".encode(), b"\xc2\x85", b"\xe2\x80\xa8"]  # fmt: skip
    for _ in range(3000):
        data = bytearray(agent_file(body=rng.choice(["Prompt.", "P 🚀", "", "a\r\nb"])).encode())
        for _ in range(rng.randint(1, 3)):
            at = rng.choice([0, 4, len(data) - 1, len(data), rng.randint(0, len(data))])
            data[at:at] = rng.choice(pieces)
        shortcut += _same_either_way(bytes(data))
    assert shortcut > 300  # the shortcut is exercised, not just the fallback
    if CORPUS.is_dir():
        corpus = sorted((CORPUS / "agents").rglob("*.md"))
        assert sum(_same_either_way(path.read_bytes()) for path in corpus) > len(corpus) // 2


def test_batch_loading_equals_loading_file_by_file() -> None:
    """load_markdown_agent_batch (the registry's stage-by-stage path) gives each file's own outcome."""
    from catui.agents.markdown import AgentFileError, load_markdown_agent_batch, load_markdown_agent_bytes

    batch = [
        ("/p/a.md", agent_file().encode()),
        ("/p/b.md", b"---\nname: b\ndescription: d\xff\n---\nbody"),  # not UTF-8
        ("/p/c.md", "---\nname: c\ndescription: d\n---\n中文".encode()),
        ("/p/d.md", b"---\nname: d\n---\nno description"),
        ("/p/e.md", b"plain Markdown, no frontmatter"),
        ("/p/f.md", b"\xef\xbb\xbf---\nname: f\ndescription: d\n---\nbody"),
    ]
    if CORPUS.is_dir():
        batch += [(str(path), path.read_bytes()) for path in sorted((CORPUS / "agents").rglob("*.md"))[:300]]
    results = load_markdown_agent_batch(batch, source="projectSettings", base_dir="/p")
    assert len(results) == len(batch)
    for (path, data), result in zip(batch, results, strict=True):
        try:
            expected = load_markdown_agent_bytes(data, path=path, source="projectSettings", base_dir="/p")
        except AgentFileError as exc:
            assert result.definition is None and result.error == str(exc)
            continue
        got_fields = None if result.definition is None else result.definition.__dict__
        want_fields = None if expected.definition is None else expected.definition.__dict__
        assert (got_fields, result.error, result.warnings, result.not_an_agent) == (
            want_fields,
            expected.error,
            expected.warnings,
            expected.not_an_agent,
        ), path
    assert results[1].error is not None and "not UTF-8" in results[1].error


def test_read_agent_bytes_reads_the_whole_file_when_the_size_hint_is_stale(tmp_path: Path) -> None:
    """The registry passes the scan's stat size; a file that grew or shrank since is still read whole."""
    from catui.agents.markdown import AgentFileError, read_agent_bytes

    path = tmp_path / "a.md"
    content = agent_file(body="x" * 100_000).encode()
    path.write_bytes(content)
    for hint in (0, 3, len(content) - 1, len(content), len(content) + 50):
        assert read_agent_bytes(path, size_hint=hint) == content
    path.write_bytes(b"y" * (MAX_AGENT_FILE_BYTES + 10))
    with pytest.raises(AgentFileError, match="larger than"):
        read_agent_bytes(path, size_hint=10)


def test_common_field_values_always_pass_the_strict_check() -> None:
    """The Markdown loader skips fields_are_checked for files with only COMMON_KEYS: coerce_fields' values
    for those keys must pass it whatever the input (tool strings and lists, models, colours)."""
    from catui.agents.definition import fields_are_checked
    from catui.agents.fields import COMMON_KEYS, coerce_fields

    tool_values: list[object] = [
        None, "", " ", ",", "Read", "Read, Grep", " Read ,, Grep ", "Agent(a, b), Read", "Bash( x , y )",
        "(", ")", "( )", "Read\u00a0Grep", "Read\u2003, Grep", "*", "Read, *", [], ["Read", " ", ""],
        ["Read, Grep", 3, None, True], [" "], {"Read": True}, 12, True, "\u3000", "a(\u00a0)b",
    ]  # fmt: skip
    models: list[object] = [None, "", " ", "sonnet", " Sonnet ", "INHERIT", " inherit ", "x:y", 5, [], "\u00a0haiku"]  # fmt: skip
    colors: list[object] = [None, "blue", "Blue", "", 3, "orange"]
    assert {"name", "description", "prompt", "tools", "disallowedTools", "model", "color"} == COMMON_KEYS
    for tools in tool_values:
        for model in models:
            for color in colors:
                data = {"name": "a", "description": "d", "tools": tools, "disallowedTools": tools}
                data.update(model=model, color=color, prompt="p")
                fields = coerce_fields(data, lambda message: None)
                assert fields_are_checked(fields), (tools, model, color, fields)


def test_tool_string_split_equals_the_separator_regex_for_every_character() -> None:
    """split_tool_specs splits with str.split(); it must cut exactly where ``[,\\s]+`` would."""
    import re
    import sys

    from catui.permissions.tool_specs import split_tool_specs

    separators = re.compile(r"[,\s]+")
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF or code == ord("("):  # surrogates; "(" takes the parentheses path
            continue
        text = f"a{chr(code)}b,,{chr(code)}c"
        assert split_tool_specs(text) == [item for item in separators.split(text) if item], hex(code)


def test_a_loaded_definition_is_a_normal_pydantic_model(tmp_path: Path) -> None:
    """Definitions built without validation still copy, dump and compare like validated ones."""
    from catui.agents.definition import AgentDefinition

    agent = load(agent_file(extra="tools: Read, Grep\nmodel: sonnet\ncategory: review\n")).definition
    assert agent is not None
    copied = agent.model_copy(update={"model": "opus"})
    assert (copied.model, copied.tools, agent.model) == ("opus", ["Read", "Grep"], "sonnet")
    assert "model" in copied.model_fields_set
    validated = AgentDefinition(**agent.model_dump(exclude={"system_prompt_builder"}))
    assert validated == agent
    assert agent.model_dump(exclude_unset=True)["extra_fields"] == {"category": "review"}
    assert AgentDefinition.__new__ is object.__new__  # construct_loaded_file calls object.__new__ directly
