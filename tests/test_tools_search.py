"""Glob and Grep: behaviour, ordering, and identical results from the rg binary and the Python fallback."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from catui.messages import result_text
from catui.permissions.context import PermissionContext
from catui.tools.base import ToolContext, schema_from_model
from catui.tools.glob import GlobTool
from catui.tools.glob_input import GlobInput
from catui.tools.grep import GrepTool, split_globs
from catui.tools.grep_input import GrepInput
from catui.tools.search_engine import FALLBACK_ENV, find_rg

HAVE_RG = find_rg() is not None


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv(FALLBACK_ENV, raising=False)


def write(root: Path, rel: str, content: str | bytes, mtime: int | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(root, ".gitignore", "build/\n*.log\n!keep.log\n/docs/private.md\n")
    write(root, "src/app.py", "import os\n\ndef main():\n    print('Hello world')\n    return 0\n", 1_000_000)
    write(
        root, "src/util.py", "def helper():\n    return 'hello'\n\n\n\n\nclass Hello:\n    pass\n", 1_000_300
    )
    write(root, "src/web/page.ts", "export const hello = () => 'HELLO';\n// hello again\n", 1_000_200)
    write(root, "src/web/page.tsx", "const x = <div>hello</div>;\n", 1_000_100)
    write(root, "docs/guide.md", "# Guide\nSay hello.\nSome text\nmore text\nhello at the end\n", 1_000_400)
    write(root, "docs/private.md", "hello private\n")
    write(root, "build/out.py", "hello from build\n")
    write(root, "debug.log", "hello log\n")
    write(root, "keep.log", "hello kept log\n", 1_000_500)
    write(root, ".hidden/secret.py", "hello hidden\n")
    write(root, ".env", "HELLO=1\n")
    write(root, "data.bin", b"hello\x00binary")
    write(root, "crlf.txt", "hello\r\nworld\r\n", 1_000_600)
    write(root, "nested/.gitignore", "*.tmp\n")
    write(root, "nested/a.tmp", "hello tmp\n")
    write(root, "nested/b.txt", "hello nested\nsecond line\nthird hello\n", 1_000_700)
    return root


def ctx_for(root: Path) -> ToolContext:
    return ToolContext(cwd=root, project_root=root)


async def grep(root: Path, fallback: bool, **kw: Any) -> tuple[str, bool]:
    args = GrepInput.model_validate(kw)
    result = await GrepTool(force_fallback=fallback).call(args, ctx_for(root))
    return result_text(result.content), result.is_error


# ------------------------------------------------------------------ schema


def test_grep_schema_uses_flag_names_and_aliases_round_trip() -> None:
    schema = schema_from_model(GrepInput)
    props = schema["properties"]
    assert list(props) == [
        "pattern",
        "path",
        "glob",
        "output_mode",
        "-B",
        "-A",
        "-C",
        "context",
        "-n",
        "-i",
        "type",
        "head_limit",
        "offset",
        "multiline",
    ]
    assert schema["required"] == ["pattern"] and schema["additionalProperties"] is False
    assert props["output_mode"]["enum"] == ["content", "files_with_matches", "count"]
    assert "title" not in str(schema)
    args = GrepInput.model_validate({"pattern": "x", "-i": True, "-C": 2, "-n": False})
    assert args.case_insensitive is True and args.context_flag == 2 and args.line_numbers is False
    assert props["-C"]["description"] == "Alias for context." and props["context"]["type"] == "integer"
    dumped = args.model_dump(by_alias=True, exclude_none=True)
    assert dumped == {"pattern": "x", "-i": True, "-C": 2, "-n": False}
    with pytest.raises(Exception, match="extra"):
        GrepInput.model_validate({"pattern": "x", "-z": True})


def test_split_globs() -> None:
    assert split_globs("*.py, *.{ts,tsx} !*.md") == ["*.py", "*.{ts,tsx}", "!*.md"]


# ------------------------------------------------------------------ Grep behaviour


@pytest.mark.parametrize("fallback", [False, True])
async def test_grep_files_mode_newest_first_and_respects_ignores(tree: Path, fallback: bool) -> None:
    if not fallback and not HAVE_RG:
        pytest.skip("rg not installed")
    write(tree, ".git/notes.txt", "hello from the repository's own files\n")
    out, is_error = await grep(tree, fallback, pattern="hello")
    assert not is_error
    lines = out.splitlines()
    assert lines[0] == "Found 8 files"
    order = [
        ".hidden/secret.py",  # hidden files are searched, as Claude Code's Grep does (rg --hidden)
        "nested/b.txt",
        "crlf.txt",
        "keep.log",
        "docs/guide.md",
        "src/util.py",
        "src/web/page.ts",
        "src/web/page.tsx",
    ]
    assert lines[1:] == [str(tree / p) for p in order]
    joined = "\n".join(lines)
    for excluded in ("build/out.py", "debug.log", ".git/", ".env", "data.bin", "a.tmp", "private.md"):
        assert excluded not in joined


@pytest.mark.parametrize("fallback", [False, True])
async def test_grep_content_count_and_paging(tree: Path, fallback: bool) -> None:
    if not fallback and not HAVE_RG:
        pytest.skip("rg not installed")
    content, _ = await grep(tree, fallback, pattern="hello", output_mode="content", path=str(tree / "nested"))
    assert content == f"{tree}/nested/b.txt:1:hello nested\n{tree}/nested/b.txt:3:third hello"
    around = {"pattern": "nested", "output_mode": "content", "path": str(tree / "nested")}
    with_flag, _ = await grep(tree, fallback, **around, **{"-C": 1})
    with_word, _ = await grep(tree, fallback, **around, context=1)
    assert with_flag == with_word and f"{tree}/nested/b.txt-2-" in with_word
    count, _ = await grep(
        tree, fallback, pattern="hello", output_mode="count", **{"-i": True}, path=str(tree / "src")
    )
    assert f"{tree}/src/util.py:2" in count and "Found 6 total occurrences across 4 files." in count
    paged, _ = await grep(tree, fallback, pattern="hello", head_limit=2, offset=1)
    assert len(paged.splitlines()) == 1 + 2 + 2 and "head_limit=2" in paged
    none, is_error = await grep(tree, fallback, pattern="zebra_never")
    assert none == "No files found" and not is_error
    missing, is_error = await grep(tree, fallback, pattern="x", path=str(tree / "nope"))
    assert is_error and "does not exist" in missing


async def test_grep_bad_regex_is_an_error_result(tree: Path) -> None:
    for fallback in [False, True] if HAVE_RG else [True]:
        out, is_error = await grep(tree, fallback, pattern="(unclosed")
        assert is_error and "Grep failed" in out


QUERIES: list[dict[str, Any]] = [
    {"pattern": "hello"},
    {"pattern": "hello", "output_mode": "content"},
    {"pattern": "hello", "output_mode": "content", "-n": False},
    {"pattern": "HELLO", "-i": True, "output_mode": "count"},
    {"pattern": "hello", "output_mode": "content", "-C": 1},
    {"pattern": "return", "output_mode": "content", "-A": 2, "-B": 1},
    {"pattern": "hello", "glob": "*.py"},
    {"pattern": "hello", "glob": "*.{ts,tsx}", "output_mode": "content"},
    {"pattern": "hello", "glob": "!src/**"},
    {"pattern": "hello", "glob": "*.log"},
    {"pattern": "hello", "type": "py", "output_mode": "content"},
    {"pattern": "hello", "type": "ts", "-i": True},
    {"pattern": r"def \w+\(\):\n\s+return", "multiline": True, "output_mode": "content"},
    {"pattern": r"def \w+\(\):\n\s+return", "multiline": True, "output_mode": "count"},
    {"pattern": "world$", "output_mode": "content"},
    {"pattern": "hello", "output_mode": "content", "head_limit": 3, "offset": 2},
    {"pattern": "hello", "path": "src", "output_mode": "count"},
    {"pattern": "hello", "path": "nested/b.txt", "output_mode": "content", "-C": 5},
]


@pytest.mark.skipif(not HAVE_RG, reason="rg not installed")
@pytest.mark.parametrize("query", QUERIES, ids=[str(q) for q in QUERIES])
async def test_grep_rg_and_fallback_agree(tree: Path, query: dict[str, Any]) -> None:
    with_rg = await grep(tree, False, **query)
    with_python = await grep(tree, True, **query)
    assert with_rg == with_python
    assert not with_rg[1]


@pytest.mark.skipif(not HAVE_RG, reason="rg not installed")
async def test_fallback_env_var_forces_python(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_rg() is not None
    monkeypatch.setenv(FALLBACK_ENV, "1")
    assert find_rg() is None
    out, _ = await grep(tree, False, pattern="hello", glob="src/*.py")
    assert out.splitlines() == ["Found 1 file", str(tree / "src/util.py")]


# ------------------------------------------------------------------ Glob


async def glob(root: Path, fallback: bool, **kw: Any) -> tuple[str, bool, Any]:
    result = await GlobTool(force_fallback=fallback).call(GlobInput.model_validate(kw), ctx_for(root))
    return result_text(result.content), result.is_error, result.data


@pytest.mark.parametrize("fallback", [False, True])
async def test_glob_sorted_newest_first_and_ignores(tree: Path, fallback: bool) -> None:
    if not fallback and not HAVE_RG:
        pytest.skip("rg not installed")
    out, is_error, _ = await glob(tree, fallback, pattern="**/*.py")
    assert not is_error
    assert out.splitlines() == [str(tree / "src/util.py"), str(tree / "src/app.py")]
    under, _, _ = await glob(tree, fallback, pattern="*.ts*", path=str(tree / "src"))
    assert under.splitlines() == [str(tree / "src/web/page.ts"), str(tree / "src/web/page.tsx")]
    absolute, _, _ = await glob(tree, fallback, pattern=f"{tree}/docs/*.md")
    assert absolute.splitlines() == [str(tree / "docs/guide.md")]
    nothing, is_error, _ = await glob(tree, fallback, pattern="*.java")
    assert nothing == "No files found" and not is_error
    bad, is_error, _ = await glob(tree, fallback, pattern="*", path=str(tree / "missing"))
    assert is_error and "does not exist" in bad


@pytest.mark.parametrize("fallback", [False, True])
async def test_glob_caps_at_100(tmp_path: Path, fallback: bool) -> None:
    if not fallback and not HAVE_RG:
        pytest.skip("rg not installed")
    for i in range(120):
        write(tmp_path, f"f{i:03}.txt", "x", 1_000_000 + i)
    out, _, data = await glob(tmp_path, fallback, pattern="*.txt")
    lines = out.splitlines()
    assert lines[0] == str(tmp_path / "f119.txt") and len(lines) == 101
    assert "100 newest of 120" in lines[-1] and data["truncated"] is True


@pytest.mark.skipif(not HAVE_RG, reason="rg not installed")
@pytest.mark.parametrize("pattern", ["**/*.py", "*.md", "src/**", "*.{ts,tsx}", "*.log", "nested/*"])
async def test_glob_rg_and_fallback_agree(tree: Path, pattern: str) -> None:
    assert (await glob(tree, False, pattern=pattern))[:2] == (await glob(tree, True, pattern=pattern))[:2]


async def test_glob_accepts_dot_slash_patterns(tree: Path) -> None:
    out, _, _ = await glob(tree, True, pattern="./src/*.py")
    assert out.splitlines() == [str(tree / "src/util.py"), str(tree / "src/app.py")]


@pytest.mark.skipif(not HAVE_RG, reason="rg not installed")
async def test_grep_abort_kills_a_blocked_rg(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # rg blocks reading it: nobody ever writes
    ctx = ctx_for(tmp_path)

    async def trip() -> None:
        await asyncio.sleep(0.2)
        ctx.abort.set()

    tripper = asyncio.create_task(trip())
    result = await GrepTool().call(GrepInput(pattern="hello", path=str(fifo)), ctx)
    await tripper
    assert result.is_error and "interrupted" in result_text(result.content)


async def test_glob_absolute_pattern_is_checked_where_it_searches(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    write(project, "a.txt", "x")
    write(outside, "secret.txt", "x")
    permissions = PermissionContext(working_directories=(project.resolve(),))
    tool, ctx = GlobTool(), ctx_for(project)
    escaping = tool.permission_request(GlobInput(pattern=f"{outside}/*.txt"), ctx)
    assert escaping.file_path == outside.resolve()
    assert permissions.decide(escaping).behavior == "ask"
    assert permissions.with_mode("dontAsk").decide(escaping).behavior == "deny"
    inside = tool.permission_request(GlobInput(pattern=f"{project}/*.txt", path=str(outside)), ctx)
    assert permissions.decide(inside).behavior == "allow"


async def test_grep_caps_at_250_unless_head_limit_says_otherwise(tmp_path: Path) -> None:
    for i in range(260):
        write(tmp_path, f"f{i:03}.txt", "needle\n", 1_000_000 + i)
    capped, _ = await grep(tmp_path, True, pattern="needle")
    lines = capped.splitlines()
    assert lines[0] == "Found 260 files" and lines[1] == str(tmp_path / "f259.txt")
    assert sum(1 for line in lines if line.startswith(str(tmp_path))) == 250
    assert "head_limit=250" in lines[-1]
    everything, _ = await grep(tmp_path, True, pattern="needle", head_limit=0)
    assert sum(1 for line in everything.splitlines() if line.startswith(str(tmp_path))) == 260
