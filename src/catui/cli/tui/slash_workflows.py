"""``/workflows``: the workflow runs of this session, live — phases, agents running and done, tokens.

On a terminal the view is redrawn as the runs progress until a key is pressed or no run is still going;
its last state stays on the screen. Without a terminal it prints the state once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catui.cli.tui.slash_commands import CommandHost, SlashCommand
from catui.errors import ConfigurationError

if TYPE_CHECKING:
    from catui.workflows.live import AgentLine, LiveWorkflow

USAGE = "/workflows [RUN_ID|TASK_ID]"
MAX_RUNNING_SHOWN = 12
MAX_DONE_SHOWN = 6
STATE_MARKS = {"running": "◐", "done": "✓", "replayed": "↺", "error": "✗"}
RUN_MARKS = {"running": "◆", "completed": "✓", "failed": "✗", "stopped": "■"}


def _seconds(value: float) -> str:
    return f"{value:.0f}s" if value < 120 else f"{value / 60:.0f}m"


def _agent_line(agent: AgentLine, width: int) -> str:
    phase = f"[{agent.phase}]" if agent.phase else ""
    tail = f"{agent.tokens:,} tokens" if agent.state != "replayed" else "from the journal"
    if agent.state == "error" and agent.error:
        tail += f" · {agent.error}"
    return f"    {STATE_MARKS.get(agent.state, '·')} {agent.label[:width].ljust(width)}  {phase:<14} {agent.state:<8} {tail}"


def render_run(run: LiveWorkflow) -> list[str]:
    """One run: a header with its counts and tokens, its phases, and its agents (running first, then the
    latest finished ones)."""
    agents = run.agents()
    running = [a for a in agents if a.state == "running"]
    done = [a for a in agents if a.state in ("done", "replayed")]
    failed = [a for a in agents if a.state == "error"]
    tokens = sum(a.tokens for a in agents)
    counts = [f"{len(running)} running", f"{len(done)} done"] + ([f"{len(failed)} failed"] if failed else [])
    lines = [f"{RUN_MARKS.get(run.status, '·')} {run.name} · {run.summary} · {run.status} · {', '.join(counts)} · "
             f"{tokens:,} tokens · {_seconds(run.duration_s())}",
             f"  run {run.run_id} · task {run.task_id}"]
    if run.error and run.status != "running":
        lines.append(f"  {run.status}: {run.error}")
    titles = run.phase_titles()
    if titles:
        current = run.current_phase
        reached = titles.index(current) if current in titles else -1
        marks = []
        for index, title in enumerate(titles):
            group_running = run.group_running(title)  # a child workflow's group: by its own agents
            if group_running is not None:
                mark = ("▸" if run.status == "running" else "·") if group_running else "✓"  # "·": stopped in it
                marks.append(f"{mark} {title}")
            elif index < reached or (index == reached and run.status == "completed"):
                marks.append(f"✓ {title}")
            elif index == reached:
                marks.append(f"▸ {title}")
            else:
                marks.append(f"· {title}")
        lines.append("  phases: " + "  ".join(marks))
    width = min(40, max((len(a.label) for a in agents), default=0))
    shown_running = running[:MAX_RUNNING_SHOWN]
    finished = [a for a in agents if a.state != "running"]
    shown_finished = finished[-MAX_DONE_SHOWN:]
    lines += [_agent_line(a, width) for a in shown_running]
    if len(running) > len(shown_running):
        lines.append(f"    … {len(running) - len(shown_running)} more running")
    if len(finished) > len(shown_finished):
        lines.append(f"    … {len(finished) - len(shown_finished)} earlier finished")
    lines += [_agent_line(a, width) for a in shown_finished]
    return lines


def render_runs(runs: list[LiveWorkflow]) -> list[str]:
    lines: list[str] = []
    for run in runs:
        lines += render_run(run)
    return lines


def _pick(runs: list[LiveWorkflow], ident: str) -> list[LiveWorkflow]:
    if not ident:
        running = [r for r in runs if r.status == "running"]
        return running or runs[-1:]
    found = [r for r in runs if ident in (r.run_id, r.task_id)]
    if not found:
        known = ", ".join(r.run_id for r in runs)
        raise ConfigurationError(f"no workflow {ident!r} in this session; its runs: {known}")
    return found


async def workflows_command(host: CommandHost, argument: str) -> None:
    """``/workflows``: the running runs (else the latest one), or the run named; live until a key is pressed."""
    live = host.app.services.workflows
    if live is None:
        raise ConfigurationError("the Workflow tool is not offered in this session (it is in the current profile, "
                                 "or with \"workflows\": true in the settings)")
    runs = live.list()
    if not runs:
        host.say("No workflows in this session yet.", "dim")
        return
    shown = _pick(runs, argument.strip())
    await host.watch(lambda: render_runs(shown), until=lambda: all(r.status != "running" for r in shown))


WORKFLOW_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("workflows", "watch this session's workflows: phases, agents, tokens", workflows_command,
                 "[RUN_ID|TASK_ID]"),
)
