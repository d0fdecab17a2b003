"""The Markdown loader's rules (frontmatter, YAML quirks, fields) and bad input on disk."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from catui.agents.agent_file_io import MAX_AGENT_FILE_BYTES
from catui.agents.frontmatter import parse_markdown
from catui.agents.markdown import load_markdown_agent
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


def test_yaml_12_core_schema_typing_of_plain_scalars() -> None:
    """What Claude Code's YAML 1.2 parser types, and what stays text though YAML 1.1 would type it."""
    parsed = parse_markdown(
        "---\nname: a\nbools: [true, True, TRUE, false, False, FALSE]\nints: [007, 0o17, 0x1f, -3, +4]\n"
        "floats: [1.5, .5, 1e3, -.inf]\nnulls: [~, null, Null, NULL]\nempty:\n"
        "texts: [yes, no, on, off, 2024-01-01, 1_000, 0b101, 1.0.0]\nsexagesimal: 1:30\n---\n"
    )
    assert parsed.status == "ok"
    assert parsed.frontmatter == {
        "name": "a",
        "bools": [True, True, True, False, False, False],
        "ints": [7, 15, 31, -3, 4],
        "floats": [1.5, 0.5, 1000.0, float("-inf")],
        "nulls": [None, None, None, None],
        "empty": None,
        "texts": ["yes", "no", "on", "off", "2024-01-01", "1_000", "0b101", "1.0.0"],
        "sexagesimal": "1:30",
    }


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
    assert "model 'fable' is not a known model" in messages
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
    unknown = [w.message for w in registry.warnings if "catui does not know" in w.message]
    assert unknown == [unknown[0]] and "psql" in unknown[0] and "mcp__" not in unknown[0]
    assert unknown[0] == (
        "agent 't': its tools list names a tool catui does not know: psql. It is kept, but matches nothing "
        "unless an MCP server or plugin provides it."
    )


# -- YAML errors Claude Code's parser reports and PyYAML alone would not ------------------------------


def test_duplicate_keys_are_a_yaml_error_as_in_claude_code() -> None:
    result = load("---\nname: a\ndescription: one\ndescription: two\n---\nbody\n")
    assert result.definition is None and result.error is not None and "duplicate key" in result.error


def test_a_failed_quote_retry_reports_the_first_attempts_error() -> None:
    """The first parse describes the file as written; the retry only re-reads a quoted copy."""
    result = load("---\nname: a\ndescription: Example: user: hi\ntools:\n  - Read\n - Grep\n---\nbody\n")
    assert result.definition is None and result.error is not None
    assert (
        "line 3, column 21: mapping values are not allowed" in result.error and "quote values" in result.error
    )


@pytest.mark.parametrize(
    "frontmatter, line, column, needed",
    [
        # a quoted list item of a top-level key, continued at column 0
        ('name: a\ndescription: d\ntools:\n- "Read,\nGrep"\n', 6, 1, 1),
        ("name: a\ndescription: d\ntools:\n- 'Read,\nGrep'\n", 6, 1, 1),
        # a quoted top-level value continued at column 0
        ('name: a\ndescription: "Reviews code.\nUse it after edits."\n', 4, 1, 1),
        # an indented list: the continuation must be deeper than the dash
        ('name: a\ndescription: d\ntools:\n  - "Read,\n  Grep"\n', 6, 3, 3),
        # "- key: value" items: deeper than the key
        ('name: a\ndescription: d\nhooks:\n  - matcher: "Bash\n   Edit"\n', 6, 4, 5),
        # a flow list continued at column 0
        ("name: a\ndescription: d\ntools: [Read,\nGrep]\n", 5, 1, 1),
    ],
)
def test_under_indented_continuation_lines_are_reported_with_their_line(
    frontmatter: str, line: int, column: int, needed: int
) -> None:
    """PyYAML joins these lines silently; Claude Code's YAML 1.2 parser rejects them and drops the
    whole frontmatter, so catui reports the file, naming the line and the fix."""
    result = load(f"---\n{frontmatter}---\nbody\n")
    assert result.definition is None and result.error is not None
    assert result.error.startswith("the frontmatter is not valid YAML")
    assert f"line {line}, column {column}:" in result.error
    assert f"indented by at least {needed} space" in result.error
    assert f"indent it, or join it to line {line - 1}" in result.error


@pytest.mark.parametrize(
    "frontmatter, expected",
    [
        ('name: a\ndescription: d\ntools:\n- "Read,\n Grep"\n', ["Read", "Grep"]),
        ('name: a\ndescription: d\ntools:\n  - "Read,\n   Grep"\n', ["Read", "Grep"]),
        ("name: a\ndescription: d\ntools: [Read,\n  Grep\n]\n", ["Read", "Grep"]),
        ("name: a\ndescription: d\ntools: [Read,\n# a comment line\n  Grep]\n", ["Read", "Grep"]),
        ('name: a\ndescription: d\ntools:\n- "Read,\n\n Grep"\n', ["Read", "Grep"]),
    ],
)
def test_continuation_lines_indented_enough_still_load(frontmatter: str, expected: list[str]) -> None:
    agent = load(f"---\n{frontmatter}---\nbody\n").definition
    assert agent is not None and agent.tools == expected


def test_an_alias_is_checked_where_its_anchor_stands() -> None:
    text = '---\nname: a\ndescription: &d "Reviews\n code."\nhooks:\n  - x:\n      - *d\n---\nbody\n'
    agent = load(text).definition
    assert agent is not None and agent.description == "Reviews code."


def test_a_corpus_file_continued_at_column_0_is_reported_with_its_line(project: Path) -> None:
    """A real file (Japanese translation) whose description goes on at column 0 after a blank line:
    Claude Code drops its frontmatter (expectations.json: yaml_error, invalid). PyYAML notices the
    missing ':' only on the next line; the report names the line that lacks it."""
    name = "agents/affaan-m__everything-claude-code/docs/ja-JP/agents/go-reviewer.md"
    source = CORPUS / name
    if not source.is_file():
        pytest.skip("corpus not available")
    target = project / ".claude" / "agents" / "go-reviewer.md"
    target.write_bytes(source.read_bytes())
    line = source.read_text(encoding="utf-8").split("\n")[4]
    assert line and not line[0].isspace() and ":" not in line  # line 5: the unindented continuation

    registry = registry_for(project)
    assert "go-reviewer" not in registry.names()
    [failed] = [f for f in registry.failed_files if f.path == str(target)]
    assert failed.error.startswith("the frontmatter is not valid YAML")
    assert "line 5, column 1: this line is not a 'key: value' line" in failed.error
    assert "indent it" in failed.error


def test_catui_help_does_not_import_the_yaml_parser() -> None:
    """The loaders import PyYAML at module level; start-up of `catui --help` must not reach them."""
    import os
    import subprocess
    import sys

    # a narrow terminal: click renders the help (a wide one prints the stored copy, catui.cli.stored_help)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "catui", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "60"},
    )
    assert done.returncode == 0, done.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "catui.cli.main" in imported  # the import trace is really there
    assert not [module for module in imported if "yaml" in module]


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


def test_parse_markdown_statuses() -> None:
    retried = parse_markdown("---\nname: a\ndescription: Example: user: hi\ntools: [Read]\n---\nbody\n")
    assert (retried.frontmatter, retried.status, retried.body) == (
        {"name": "a", "description": "Example: user: hi", "tools": "[Read]"},
        "ok_after_quote_retry",
        "body\n",
    )
    hashed = parse_markdown('---\nname: a\ndescription: Fix "#1" #2: now\n---\n')
    assert (hashed.frontmatter, hashed.status) == (
        {"name": "a", "description": 'Fix "#1" #2: now'},
        "ok_hash_prequoted",
    )
    plain = parse_markdown('---\nname: a\ndescription: "x"\ntools: ["Read", Grep]\nmaxTurns: 3\n---\n')
    assert (plain.frontmatter, plain.status) == (
        {"name": "a", "description": "x", "tools": ["Read", "Grep"], "maxTurns": 3},
        "ok",
    )


# -- the bytes path (load_markdown_agent_bytes) against decoding the whole file ----------------------


def _outcome(load):  # type: ignore[no-untyped-def]
    from catui.agents.agent_file_io import AgentFileError

    try:
        result = load()
    except AgentFileError as exc:
        return ("unreadable", str(exc))
    definition = result.definition
    fields = None if definition is None else {k: v for k, v in definition.__dict__.items()}
    return fields, result.error, [w.to_dict() for w in result.warnings], result.not_an_agent


def _same_either_way(data: bytes) -> bool:
    """True when the bytes path took its shortcut; asserts it matches decoding the text first."""
    from catui.agents.agent_file_io import decode_agent_file
    from catui.agents.markdown import load_markdown_agent, load_markdown_agent_bytes
    from catui.agents.markdown_split import split_plain_file

    options = {"path": "/p/dir/agent.md", "source": "projectSettings", "base_dir": "/p"}
    got = _outcome(lambda: load_markdown_agent_bytes(data, **options))
    expected = _outcome(lambda: load_markdown_agent(decode_agent_file(data), **options))
    assert got == expected, data
    return split_plain_file(data) is not None


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
    from catui.agents.agent_file_io import AgentFileError
    from catui.agents.markdown import load_markdown_agent_batch, load_markdown_agent_bytes

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
    from catui.agents.agent_file_io import AgentFileError, read_agent_bytes

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
    from catui.agents.checked_fields import fields_are_checked
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


def test_a_loaded_definition_copies_dumps_and_compares_like_a_validated_one(tmp_path: Path) -> None:
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
