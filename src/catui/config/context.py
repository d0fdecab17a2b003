"""Context an agent starts with: project memory files, the environment block, a git snapshot.

The main agent's prompt (session/prompt.py) and sub-agents' prompts put these
pieces together; this module only gathers them.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

from catui.paths import user_config_dirs

GIT_TIMEOUT_S = 5.0
MAX_STATUS_CHARS = 2000
MAX_IMPORT_DEPTH = 5

# Knowledge cutoffs of the Claude models catui knows; an unknown model gets no cutoff line.
KNOWLEDGE_CUTOFFS: dict[str, str] = {
    "claude-opus-4-6": "May 2025",
    "claude-sonnet-4-6": "August 2025",
    "claude-opus-4-5": "May 2025",
    "claude-sonnet-4-5": "January 2025",
    "claude-haiku-4-5": "February 2025",
    "claude-opus-4-1": "January 2025",
    "claude-opus-4": "January 2025",
    "claude-sonnet-4": "January 2025",
    "claude-3-7-sonnet": "October 2024",
    "claude-3-5-haiku": "July 2024",
}


# ---------------------------------------------------------------- project memory


def memory_files(cwd: Path, project_root: Path, *, home: Path | None = None) -> list[tuple[Path, str]]:
    """The memory files that apply, lowest priority first, with a note on what each is.

    User files (``~/.claude/CLAUDE.md``, then ``~/.catui/CATUI.md``), then for the
    project root and every folder down to ``cwd``: ``CLAUDE.md``,
    ``.claude/CLAUDE.md``, ``CATUI.md``, ``.catui/CATUI.md``, ``CLAUDE.local.md``
    and ``CATUI.local.md``. catui's files come after Claude Code's, so they win
    where the two disagree. Only existing files are returned, each once.
    """
    claude_user, catui_user = user_config_dirs(home)
    candidates: list[tuple[Path, str]] = [
        (claude_user / "CLAUDE.md", "the user's instructions for all projects"),
        (catui_user / "CATUI.md", "the user's instructions for all projects"),
    ]
    root = project_root.resolve()
    folders = [root]
    try:
        rel = cwd.resolve().relative_to(root)
        current = root
        for part in rel.parts:
            current = current / part
            folders.append(current)
    except ValueError:
        pass
    for folder in folders:
        candidates += [
            (folder / "CLAUDE.md", "project instructions, checked into the repository"),
            (folder / ".claude" / "CLAUDE.md", "project instructions, checked into the repository"),
            (folder / "CATUI.md", "project instructions, checked into the repository"),
            (folder / ".catui" / "CATUI.md", "project instructions, checked into the repository"),
            (folder / "CLAUDE.local.md", "the user's private instructions for this project"),
            (folder / "CATUI.local.md", "the user's private instructions for this project"),
        ]
    seen: set[str] = set()
    found: list[tuple[Path, str]] = []
    for path, note in candidates:
        if not path.is_file():
            continue
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        found.append((path, note))
    return found


def load_project_memory(cwd: Path, project_root: Path, *, home: Path | None = None) -> str | None:
    """The text of every memory file that applies, each under a header naming its path; None if there are none.

    A line of the form ``@path/to/file`` (outside code blocks) pulls that file
    in after the one that names it, as Claude Code does (relative to the
    naming file's folder, up to five levels deep). Unreadable files are skipped.
    """
    sections: list[str] = []
    seen: set[str] = set()
    for path, note in memory_files(cwd, project_root, home=home):
        _append_memory(path, note, sections, seen, depth=0)
    return "\n\n".join(sections) if sections else None


def _append_memory(path: Path, note: str, sections: list[str], seen: set[str], depth: int) -> None:
    key = os.path.realpath(path)
    if key in seen:
        return
    seen.add(key)
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return
    if not text:
        return
    sections.append(f"Contents of {path} ({note}):\n\n{text}")
    if depth >= MAX_IMPORT_DEPTH:
        return
    for target in _imports(text, path.parent):
        if target.is_file():
            _append_memory(target, f"imported by {path}", sections, seen, depth + 1)


_IMPORT_RE = re.compile(r"^\s*@((?:~/|/|\./|\.\./)?[\w.\-/~]+)\s*$")


def _imports(text: str, folder: Path) -> list[Path]:
    targets: list[Path] = []
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _IMPORT_RE.match(line)
        if match:
            raw = match.group(1)
            path = Path(raw).expanduser()
            targets.append(path if path.is_absolute() else folder / path)
    return targets


# ---------------------------------------------------------------- environment


def is_git_repo(cwd: Path) -> bool:
    """Whether ``cwd`` is inside a git work tree (a ``.git`` folder or file in it or above it)."""
    current = cwd.resolve()
    return any((folder / ".git").exists() for folder in (current, *current.parents))


def shell_name() -> str:
    """The user's shell, as the model should know it (``bash``, ``zsh``, ``cmd`` …)."""
    shell = os.environ.get("SHELL")
    if shell:
        return Path(shell).name
    return "cmd" if sys.platform.startswith("win") else "sh"


def model_display_name(model_id: str) -> str:
    """``claude-sonnet-4-6`` → ``Claude Sonnet 4.6``; other ids are returned unchanged."""
    match = re.match(r"^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?(?:\[.*\])?$", model_id)
    if match:
        family, major, minor = match.groups()
        version = f"{major}.{minor}" if minor else major
        return f"Claude {family.capitalize()} {version}"
    match = re.match(r"^claude-(\d+)-(\d+)-(opus|sonnet|haiku)", model_id)
    if match:
        major, minor, family = match.groups()
        return f"Claude {family.capitalize()} {major}.{minor}"
    return model_id


def knowledge_cutoff(model_id: str) -> str | None:
    """The model's training-data cutoff, when catui knows it."""
    base = re.sub(r"-\d{8}$", "", model_id.split("[")[0])
    base = re.sub(r"-latest$", "", base)
    if base in KNOWLEDGE_CUTOFFS:
        return KNOWLEDGE_CUTOFFS[base]
    return None


def environment_block(
    cwd: Path,
    model_id: str,
    *,
    additional_dirs: Sequence[Path] = (),
    today: date | None = None,
) -> str:
    """The facts about the machine and model that go into an agent's system prompt."""
    lines = [
        "Facts about the environment this session runs in:",
        "<env>",
        f"Working directory: {cwd}",
        f"Is directory a git repo: {'Yes' if is_git_repo(cwd) else 'No'}",
    ]
    if additional_dirs:
        lines.append(f"Additional working directories: {', '.join(str(d) for d in additional_dirs)}")
    lines += [
        f"Platform: {sys.platform}",
        f"Shell: {shell_name()}",
        f"OS Version: {platform.system()} {platform.release()}",
        f"Today's date: {(today or date.today()).isoformat()}",
        "</env>",
    ]
    name = model_display_name(model_id)
    if name != model_id:
        lines.append(f"The model behind this session is {name}, model ID {model_id}.")
    else:
        lines.append(f"The model behind this session has the model ID {model_id}.")
    cutoff = knowledge_cutoff(model_id)
    if cutoff:
        lines.append(f"Its training data ends around {cutoff}; newer events may be unknown to it.")
    return "\n".join(lines)


# ---------------------------------------------------------------- git


def _may_be_in_git(cwd: Path) -> bool:
    """Whether ``cwd`` can be inside a git checkout: some folder from it upwards holds ``.git`` (or ``GIT_DIR``
    is set). When not, git would only answer "not a git repository", so no git process is started for it
    (each costs a run start-up some 5-10 ms)."""
    if os.environ.get("GIT_DIR"):
        return True
    try:
        here = cwd.resolve()
    except OSError:
        return True
    return any((folder / ".git").exists() for folder in (here, *here.parents))


def _git(cwd: Path, *args: str) -> str | None:
    """stdout of one git command, or None when git is missing, fails or times out."""
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout


def main_branch(cwd: Path) -> str:
    """The branch pull requests usually target: origin's HEAD, else main or master, else ``main``."""
    remote_head = _git(cwd, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if remote_head and remote_head.strip():
        name = remote_head.strip()
        return name.split("/", 1)[1] if name.startswith("origin/") else name
    for candidate in ("main", "master"):
        if _git(cwd, "show-ref", "--verify", "--quiet", f"refs/heads/{candidate}") is not None:
            return candidate
    return "main"


def git_status_snapshot(cwd: Path, *, max_status_chars: int = MAX_STATUS_CHARS) -> str | None:
    """Branch, main branch, short status (capped) and the last 5 commits; None outside git or without git."""
    if not _may_be_in_git(cwd):
        return None
    inside = _git(cwd, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != "true":
        return None
    # The four look-ups are independent; running them side by side keeps session start-up quick.

    with ThreadPoolExecutor(max_workers=4) as pool:
        branch_job = pool.submit(_git, cwd, "branch", "--show-current")
        status_job = pool.submit(_git, cwd, "status", "--short")
        log_job = pool.submit(_git, cwd, "log", "--oneline", "-n", "5")
        main_job = pool.submit(main_branch, cwd)
        branch = (branch_job.result() or "").strip()
        status = (status_job.result() or "").rstrip()
        log = (log_job.result() or "").rstrip()
        main = main_job.result()
    if not branch:
        head = (_git(cwd, "rev-parse", "--short", "HEAD") or "").strip()
        branch = f"(detached HEAD at {head})" if head else "(no branch)"
    if len(status) > max_status_chars:
        status = (
            status[:max_status_chars].rstrip()
            + f"\n… (status cut at {max_status_chars} characters; run `git status` with Bash for the rest)"
        )
    lines = [
        "gitStatus: a snapshot taken when the conversation started; it does not change as you work.",
        f"Current branch: {branch}",
        "",
        f"Main branch (the usual target for pull requests): {main}",
        "",
        "Status:",
        status or "(clean)",
        "",
        "Recent commits:",
        log or "(no commits yet)",
    ]
    return "\n".join(lines)


def git_branch(cwd: Path) -> str:
    """The current branch of the repository at ``cwd`` ("" outside git), for transcript lines."""
    if not _may_be_in_git(cwd):
        return ""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
