"""Merge-back with real git: ``catui worktrees diff|apply|merge`` (and the functions under them).

Each test makes a real repository, a real agent worktree (``create_worktree``) with committed,
uncommitted and untracked work, settles it as the Agent tool does, then brings the work back.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from catui.cli.commands.worktrees import command
from catui.state import StateDB
from catui.worktree import WorktreeInfo, create_worktree, finish_worktree
from tests.support.git_repos import git, head, isolate_git, make_repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return make_repo(tmp_path / "proj", {"README.md": "one\ntwo\nthree\n", "src/app.py": "x = 1\n"})


def make_kept(repo: Path, agent_id: str = "a1111111aaaaaaaa", *, commit_first: bool = False) -> WorktreeInfo:
    """A kept worktree: README line two changed, a new untracked file; optionally a commit before that."""

    async def run() -> WorktreeInfo:
        state = StateDB(repo)
        info = await create_worktree(agent_id, repo_root=repo, settings={}, state=state)
        if commit_first:
            (info.path / "src" / "app.py").write_text("x = 2\n")
            git(info.path, "commit", "-qam", "agent: x is 2")
        (info.path / "README.md").write_text("one\nTWO\nthree\n")
        (info.path / "notes.txt").write_text("agent notes\n")
        outcome = await finish_worktree(info, state)
        assert outcome.kept
        state.close()
        return info

    return asyncio.run(run())


def cli(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(command, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def status(path: Path) -> str:
    return git(path, "status", "--porcelain")


def test_diff_shows_the_stat_then_every_change_including_untracked_files(repo: Path) -> None:
    info = make_kept(repo, commit_first=True)
    agent_status = status(info.path)
    code, out, _ = cli(repo, "diff", "a1111111")
    assert code == 0, out
    stat, _, patch = out.partition("\n\n")
    assert "3 files changed, 3 insertions(+), 2 deletions(-)" in stat
    assert "README.md" in stat and "notes.txt" in stat and "src/app.py" in stat
    assert "-two\n+TWO" in patch and "+agent notes" in patch and "-x = 1\n+x = 2" in patch
    assert status(info.path) == agent_status  # looking changed nothing in the agent's worktree (index included)
    code, only_stat, _ = cli(repo, "diff", "agent-a1111111", "--stat")
    assert code == 0 and "notes.txt" in only_stat and "+agent notes" not in only_stat


def test_apply_brings_the_work_in_staged_and_keeps_the_worktree(repo: Path) -> None:
    info = make_kept(repo, commit_first=True)
    (repo / "other.txt").write_text("main moved on\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-qm", "main: other")
    before = head(repo)
    code, out, _ = cli(repo, "apply", "a1111111")
    assert code == 0, out
    assert "Applied agent a1111111aaaaaaaa's work" in out and "3 files" in out
    assert head(repo) == before  # not committed
    assert (repo / "README.md").read_text() == "one\nTWO\nthree\n"
    assert (repo / "notes.txt").read_text() == "agent notes\n" and (repo / "src/app.py").read_text() == "x = 2\n"
    assert sorted(status(repo).splitlines()) == ["A  notes.txt", "M  README.md", "M  src/app.py"]
    assert info.path.is_dir() and "catui worktrees rm a1111111aaaaaaaa" in out


def test_a_conflict_changes_nothing_names_the_files_and_keeps_the_worktree(repo: Path) -> None:
    info = make_kept(repo)
    (repo / "README.md").write_text("one\nDOS\nthree\n")
    git(repo, "commit", "-qam", "main: two is DOS")
    before = head(repo)
    for args in (("apply", "a1111111"), ("merge", "a1111111", "--commit")):
        code, _out, err = cli(repo, *args)
        assert code == 1
        assert "conflicts with the checkout" in err and "conflict: README.md" in err
        assert "nothing was changed" in err
        assert head(repo) == before and status(repo) == "" and not (repo / "notes.txt").exists()
        assert (repo / "README.md").read_text() == "one\nDOS\nthree\n"
        assert info.path.is_dir() and (info.path / "notes.txt").exists()


def test_merge_commit_fast_forwards_when_the_checkout_has_not_moved(repo: Path) -> None:
    make_kept(repo, commit_first=True)
    start = head(repo)
    code, out, _ = cli(repo, "merge", "a1111111", "--commit")
    assert code == 0, out
    assert "as fast-forward" in out
    assert status(repo) == ""
    log = git(repo, "log", "--format=%s", f"{start}..HEAD").splitlines()
    assert log == ["catui: uncommitted work of agent a1111111aaaaaaaa", "agent: x is 2"]
    assert (repo / "notes.txt").read_text() == "agent notes\n"


def test_merge_commit_makes_a_merge_commit_when_the_checkout_moved(repo: Path) -> None:
    make_kept(repo)
    (repo / "src" / "app.py").write_text("x = 3\n")
    git(repo, "commit", "-qam", "main: x is 3")
    before = head(repo)
    code, out, _ = cli(repo, "merge", "a1111111", "--commit", "-m", "Bring in the README fix")
    assert code == 0, out
    assert "as merge commit" in out and status(repo) == ""
    parents = git(repo, "log", "-1", "--format=%P").split()
    assert parents[0] == before and len(parents) == 2
    assert git(repo, "log", "-1", "--format=%s").strip() == "Bring in the README fix"
    assert (repo / "README.md").read_text() == "one\nTWO\nthree\n" and (repo / "src/app.py").read_text() == "x = 3\n"


def test_local_changes_in_the_way_refuse_the_whole_update(repo: Path) -> None:
    make_kept(repo)
    (repo / "README.md").write_text("one\ntwo\nthree\nlocal edit\n")
    (repo / "notes.txt").write_text("my own untracked notes\n")
    before = head(repo)
    code, _, err = cli(repo, "merge", "a1111111", "--commit")
    assert code == 1
    assert "local changes" in err and "nothing was changed" in err
    assert head(repo) == before
    assert (repo / "README.md").read_text().endswith("local edit\n")
    assert (repo / "notes.txt").read_text() == "my own untracked notes\n"


def test_unknown_ids_and_a_worktree_without_changes(repo: Path) -> None:
    code, _, err = cli(repo, "diff", "a9999999")
    assert code == 1 and "has no catui state" in err
    make_kept(repo)
    code, _, err = cli(repo, "apply", "zzzz9999")
    assert code == 1 and "no worktree matches 'zzzz9999'; known agent ids: a1111111aaaaaaaa" in err
    code, _, err = cli(repo, "merge", "a1111111", "-m", "x")
    assert code == 2 and "--message needs --commit" in err


def test_the_real_cli_subcommand_runs(repo: Path) -> None:
    make_kept(repo)
    done = subprocess.run([sys.executable, "-m", "catui", "worktrees", "apply", "a1111111"], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (repo / "notes.txt").exists() and "Applied agent" in done.stdout


def test_apply_records_the_agents_work_when_git_knows_no_user(repo: Path, tmp_path: Path) -> None:
    """No user.name/email and no guessing (useConfigOnly): the agent's uncommitted work is still recorded."""
    make_kept(repo)
    config = tmp_path / "no-identity.gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_", "EMAIL"))}
    env["GIT_CONFIG_GLOBAL"] = str(config)
    assert subprocess.run(["git", "var", "GIT_COMMITTER_IDENT"], cwd=repo, env=env, capture_output=True).returncode
    done = subprocess.run([sys.executable, "-m", "catui", "worktrees", "apply", "a1111111"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (repo / "notes.txt").read_text() == "agent notes\n" and "Applied agent" in done.stdout
    assert sorted(status(repo).splitlines()) == ["A  notes.txt", "M  README.md"]


def run_scripted(repo: Path, turns: list[dict[str, object]], *args: str) -> list[dict[str, object]]:
    script = repo.parent / f"script{len(list(repo.parent.glob('script*.json')))}.json"
    script.write_text(json.dumps({"turns": turns}))
    done = subprocess.run(
        [sys.executable, "-m", "catui", "-p", "PARENT go", "--output-format", "stream-json", "--verbose",
         "--model", f"scripted:{script}", *args],
        cwd=repo, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def tool_result_for(lines: list[dict[str, object]], tool_use_id: str) -> tuple[dict[str, object], object]:
    for line in lines:
        message = line.get("message")
        if line["type"] == "user" and line.get("parent_tool_use_id") is None and isinstance(message, dict):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("tool_use_id") == tool_use_id:
                    return block, line.get("tool_use_result")
    raise AssertionError(f"no result for {tool_use_id}")


def test_a_parent_agent_merges_through_the_tool_only_when_the_setting_allows(repo: Path) -> None:
    (repo / ".claude").mkdir()
    isolated_run = [
        {"match": {"last_is_tool_result": False, "first_user_contains": "CHILD"},
         "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo from the agent > made.txt"}}]},
        {"match": {"first_user_contains": "CHILD", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "made it"}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_iso", "name": "Agent",
                      "input": {"description": "make a file", "prompt": "CHILD make", "isolation": "worktree"}}]},
        {"match": {"first_user_contains": "PARENT", "last_is_tool_result": True},
         "content": [{"type": "text", "text": "parent done"}]},
    ]
    (repo / ".claude" / "settings.json").write_text('{"worktree": {"allowAgentMerge": true}}')
    lines = run_scripted(repo, isolated_run, "--permission-mode", "bypassPermissions")
    block, data = tool_result_for(lines, "toolu_iso")
    assert isinstance(data, dict), block
    agent_id = str(data["agentId"])
    trailer = json.dumps(block["content"])
    assert f"WorktreeMerge tool (agent_id: {agent_id})" in trailer
    assert not (repo / "made.txt").exists()

    merge_turns = [
        {"match": {"last_is_tool_result": False},
         "content": [{"type": "tool_use", "id": "toolu_diff", "name": "WorktreeMerge",
                      "input": {"agent_id": agent_id, "action": "diff"}},
                     {"type": "tool_use", "id": "toolu_merge", "name": "WorktreeMerge",
                      "input": {"agent_id": agent_id, "action": "merge", "commit_message": "agent's file"}}]},
        {"match": {"last_is_tool_result": True}, "content": [{"type": "text", "text": "merged"}]},
    ]
    before = head(repo)
    lines = run_scripted(repo, merge_turns, "--allowedTools", "WorktreeMerge")
    assert "WorktreeMerge" in lines[0]["tools"]
    diff_block, diff_data = tool_result_for(lines, "toolu_diff")
    assert "+from the agent" in json.dumps(diff_block["content"]) and diff_data["files"] == ["made.txt"]
    merge_block, merge_data = tool_result_for(lines, "toolu_merge")
    assert not merge_block.get("is_error") and merge_data["status"] == "fast-forward"
    assert (repo / "made.txt").read_text() == "from the agent\n"
    assert git(repo, "rev-list", "--count", f"{before}..HEAD").strip() == "1"

    (repo / ".claude" / "settings.json").write_text("{}")
    lines = run_scripted(repo, merge_turns, "--allowedTools", "WorktreeMerge")
    assert "WorktreeMerge" not in lines[0]["tools"]
    refused, _ = tool_result_for(lines, "toolu_merge")
    assert refused["is_error"] is True


async def test_the_sdk_diffs_merges_and_reports_conflicts(repo: Path) -> None:
    import catui

    info = await asyncio.to_thread(make_kept, repo)
    diff = await catui.worktree_diff("a1111111", cwd=repo)
    assert diff.files == ["README.md", "notes.txt"] and "+TWO" in diff.patch
    (repo / "README.md").write_text("one\nDOS\nthree\n")
    git(repo, "commit", "-qam", "main: DOS")
    with pytest.raises(catui.MergeConflict) as caught:
        await catui.merge_worktree(info.agent_id, cwd=repo / "src")
    assert caught.value.files == ["README.md"] and status(repo) == ""
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    merged = await catui.merge_worktree(info.agent_id, cwd=repo, message="unused for a fast-forward")
    assert merged.kind == "fast-forward" and head(repo) == merged.commit
    assert (repo / "notes.txt").read_text() == "agent notes\n"
