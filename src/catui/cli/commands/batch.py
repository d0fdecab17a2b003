"""``catui batch TASKS.jsonl``: run many independent prompts, each as its own agent (catui.app.batch).

Progress goes to standard error (a bar on a terminal, one line per finished
task otherwise), results to ``-o``'s file as JSON lines as tasks finish (else to
standard output), and a summary at the end. Running the same command again
after an interruption skips the ids already in the results file.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from catui.app.batch import BatchResult, BatchSummary, parse_tasks, run_batch
from catui.app.build import RunOptions
from catui.errors import CatuiError

BAR_WIDTH = 30
EXIT_INTERRUPTED = 130


class ProgressLine:
    """The stderr progress display: a redrawn bar on a terminal, plain lines in a pipe or log."""

    def __init__(self, total: int, skipped: int) -> None:
        self.total, self.skipped = total, skipped
        self.tty = sys.stderr.isatty()

    def update(self, result: BatchResult, summary: BatchSummary) -> None:
        done = summary.completed + summary.failed + summary.skipped
        if self.tty:
            filled = int(BAR_WIDTH * done / max(1, self.total))
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            sys.stderr.write(f"\r[{bar}] {done}/{self.total}  {summary.failed} failed  last: {result.id} "
                             f"{result.status}\x1b[K")
        else:
            sys.stderr.write(f"[{done}/{self.total}] {result.id} {result.status}\n")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tasks_file", metavar="TASKS.jsonl", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="Append results here as JSON lines (ids already in it are skipped: resume). Default: stdout.")
@click.option("--executor", type=click.Choice(["in-process", "ray"]),
              help="Where the agents run (default: CATUI_EXECUTOR, the `executor` setting, else in-process).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="How many tasks run at once.")
@click.option("--agent", "agent", metavar="NAME", help="Agent type of tasks that name none (default general-purpose).")
@click.option("--model", help="Model of the host session (tasks inherit it unless they or their agent name one).")
@click.option("--permission-mode", type=click.Choice(["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"]),
              help="Permission mode of the agents (nobody is there to approve a tool call).")
def command(tasks_file: Path, output: Path | None, executor: str | None, concurrency: int, agent: str | None,
            model: str | None, permission_mode: str | None) -> None:
    """Run each prompt of TASKS.jsonl (one JSON object a line) as its own agent."""
    try:
        text = tasks_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot read {tasks_file}: {exc.strerror or exc}") from None
    try:
        tasks = parse_tasks(text.splitlines(), str(tasks_file))
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from None
    options = RunOptions(cwd=Path.cwd(), model=model, permission_mode=permission_mode)
    progress: ProgressLine | None = None

    def report(result: BatchResult, summary: BatchSummary) -> None:
        nonlocal progress
        if progress is None:
            progress = ProgressLine(summary.total, summary.skipped)
        progress.update(result, summary)

    try:
        summary = asyncio.run(run_batch(
            tasks, results=output, out=None if output is not None else sys.stdout, executor=executor,
            concurrency=concurrency, agent=agent, options=options, on_result=report,
        ))
    except KeyboardInterrupt:
        if progress is not None:
            progress.finish()
        where = f"run the same command again to resume from {output}" if output else "use -o FILE to make it resumable"
        click.echo(f"batch interrupted: finished tasks are in the results; {where}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except CatuiError as exc:
        raise click.ClickException(str(exc)) from None
    if progress is not None:
        progress.finish()
    click.echo(summary.line(), err=True)
    if summary.failed:
        sys.exit(1)
