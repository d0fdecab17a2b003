"""``catui demo``: a short, offline, scripted session on a throwaway copy of a sample project.

It needs no API key and no network: the model is the scripted provider
replaying ``catui/demo/demo.yaml``. The tools are real: Glob, Grep, Read,
Edit and Bash run against a copy of ``catui/demo_project`` (a tiny package
whose test fails) in a temporary git repository, two Explore agents and a
general-purpose agent run as real sub-agents, and the transcript is written
where every session's transcript goes.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from importlib.resources import files
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import click
import yaml

from catui.app.build import RunOptions, build_app, first_prompt_content
from catui.cli.tui.progress import TurnView
from catui.cli.tui.screen import Screen
from catui.errors import CatuiError
from catui.session.events import ResultEvent

DEMO_TASK = "The tests of this project fail. Find the bug, fix it, and check that the tests pass."
PLACEHOLDER_PROJECT = "${PROJECT}"
PLACEHOLDER_PYTHON = "${PYTHON}"
SUBAGENT_TURN_PREFIX = "agents:"
GIT_IDENTITY = ("-c", "user.name=catui demo", "-c", "user.email=demo@catui.invalid", "-c", "commit.gpgsign=false")


def packaged_path(*parts: str) -> Path:
    """A file or folder shipped inside the catui package."""
    return Path(str(files("catui").joinpath(*parts)))


def copy_sample_project(target_parent: Path) -> tuple[Path, str]:
    """Copy the sample project under ``target_parent`` and commit it to a new git repository.

    Returns the copy's path and a note about git (empty when the repository was made).
    """
    project = target_parent / "calc-project"
    shutil.copytree(
        packaged_path("demo_project"), project, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    git = shutil.which("git")
    if git is None:
        return project, "git is not installed, so the copy is not a git repository"
    steps = (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Sample project for catui demo"])
    for step in steps:
        done = subprocess.run([git, *GIT_IDENTITY, *step], cwd=project, capture_output=True, text=True)
        if done.returncode != 0:
            return project, f"git {step[0]} failed ({done.stderr.strip() or done.returncode})"
    return project, ""


def subagents_available() -> bool:
    """Whether this build installs the Agent tool (build_app adds it when catui.subagents.install exists)."""
    try:
        return find_spec("catui.subagents.install") is not None
    except ImportError:
        return False


def python_command() -> str:
    """The command the script's Bash calls use to run the sample tests."""
    return "python3" if shutil.which("python3") else sys.executable


def demo_script(project: Path, *, with_subagents: bool, fast: bool) -> dict[str, Any]:
    """The packaged script with its placeholders filled in, sub-agent turns dropped when unavailable."""
    raw = yaml.safe_load(packaged_path("demo", "demo.yaml").read_text(encoding="utf-8"))
    replacements = {PLACEHOLDER_PROJECT: str(project), PLACEHOLDER_PYTHON: python_command()}

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            for placeholder, value in replacements.items():
                node = node.replace(placeholder, value)
            return node
        if isinstance(node, list):
            return [fill(item) for item in node]
        if isinstance(node, dict):
            return {key: fill(value) for key, value in node.items()}
        return node

    turns = []
    for turn in raw["turns"]:
        if not with_subagents and str(turn.get("name", "")).startswith(SUBAGENT_TURN_PREFIX):
            continue
        turn = fill(turn)
        if fast:
            turn.pop("delay_ms", None)
        turns.append(turn)
    return {"turns": turns}


async def run_demo(workdir: Path, *, fast: bool, out: Any, keep: bool = True) -> int:
    """Set up the project copy, run the scripted session with live output, report where things are."""
    screen = Screen(out)
    project, git_note = copy_sample_project(workdir)
    screen.print(screen.style("catui demo", "bold") + screen.style(" · scripted model, no network, real tools", "dim"))
    screen.print(f"Sample project copied to {project}")
    if git_note:
        screen.print(screen.style(f"  ({git_note})", "yellow"))

    script_path = workdir / "demo-script.yaml"
    with_subagents = subagents_available()
    if not with_subagents:
        screen.print(screen.style("  (the Agent tool is not available in this build: the demo skips sub-agents)", "yellow"))
    options: dict[str, Any] = {
        "cwd": project,
        "permission_mode": "bypassPermissions",
        # the user's own settings (deny rules, hooks, a status line) must not change what the demo does
        "setting_sources": ("project", "local"),
        "interactive": False,
    }
    script_path.write_text(
        yaml.safe_dump(demo_script(project, with_subagents=with_subagents, fast=fast), sort_keys=False),
        encoding="utf-8",
    )
    app = build_app(RunOptions(model=f"scripted:{script_path}", **options))
    screen.print(screen.style(f"› {DEMO_TASK}", "bold"))
    view = TurnView(screen, cwd=project)
    view.status_hint = "ctrl-c to stop"
    view.start_turn()
    final: ResultEvent | None = None

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.25)
            view.tick()

    ticker = asyncio.ensure_future(tick())
    try:
        async for event in app.session.run(first_prompt_content(app, DEMO_TASK)):
            view.handle(event)
            if isinstance(event, ResultEvent) and event.agent_id is None:
                final = event
    finally:
        ticker.cancel()
        screen.suspend_live()
        await app.aclose()

    screen.print()
    if keep:
        screen.print(f"Project copy (edited): {project}")
    else:
        screen.print(f"Project copy: {project} (deleted when the demo ends; --keep keeps it)")
    screen.print(f"Transcript: {app.transcript_path}")
    if final is None or final.is_error:
        reason = final.result if final is not None else "the session ended without a result"
        screen.print(screen.style(f"The demo did not finish: {reason}", "red"))
        return 1
    return 0


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--fast", is_flag=True, help="Skip the pauses that let you watch the sub-agents work.")
@click.option(
    "--keep/--no-keep",
    default=True,
    show_default=True,
    help="Keep the project copy after the demo (its path is printed), or delete it.",
)
@click.option("--dir", "parent_dir", type=click.Path(file_okay=False, path_type=Path), help="Make the copy here instead of a new temporary folder.")
def command(fast: bool, keep: bool, parent_dir: Path | None) -> None:
    """Run a short offline demo: catui fixes a bug in a sample project.

    catui copies a tiny Python package whose test fails into a temporary
    folder (a fresh git repository), then replays a scripted model session
    on it: the main agent lists the files with Glob, sends two Explore agents
    to map the code and the tests in parallel, runs the tests with Bash,
    finds the bug with Grep and Read, fixes it with Edit, runs the tests
    again, and has a general-purpose agent review the change.

    The model is scripted (no API key, no network); the tools, sub-agents,
    permissions (bypassPermissions, so nothing asks) and the transcript are
    real. At the end catui prints where the edited copy and the transcript are.
    """
    if parent_dir is not None:
        parent_dir.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix="catui-demo-", dir=parent_dir))
    else:
        workdir = Path(tempfile.mkdtemp(prefix="catui-demo-"))
    try:
        code = asyncio.run(run_demo(workdir, fast=fast, out=sys.stdout, keep=keep))
    except CatuiError as exc:
        click.echo(f"catui demo: {exc}", err=True)
        code = 1
    except KeyboardInterrupt:
        code = 130
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(code)
