"""The ``catui`` command: print mode, the interactive session, and subcommands.

``catui [OPTIONS] [PROMPT]`` runs the agent (interactive without ``-p``);
``catui SUBCOMMAND …`` runs one of the subcommands below. Subcommand modules
are imported only when used, so ``catui --help`` stays instant.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any

import click

# name -> (module, attribute, one-line help). Each module exposes a click command.
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("catui.cli.commands.demo", "command", "Run an offline demo on the built-in scripted provider."),
    "agents": ("catui.cli.commands.agents", "command", "List, show and validate agent definitions."),
    "skills": ("catui.cli.commands.skills", "command", "List and show SKILL.md skills."),
    "tasks": ("catui.cli.commands.tasks", "command", "List, show and stop background tasks."),
    "worktrees": ("catui.cli.commands.worktrees", "command", "List and remove agents' kept worktrees."),
    "sandbox": ("catui.cli.commands.sandbox", "command", "Show what the Bash sandbox allows on this machine."),
    "teams": ("catui.cli.commands.teams", "command", "List, show and remove agent teams."),
    "batch": ("catui.cli.commands.batch", "command", "Run each prompt of a JSONL file as its own agent."),
    "sessions": ("catui.bgsessions.cli", "sessions_command", "List background sessions (catui --bg PROMPT)."),
    "logs": ("catui.bgsessions.cli", "logs_command", "Print a background session's log."),
    "attach": ("catui.bgsessions.cli", "attach_command", "Watch and answer a background session here."),
    "stop": ("catui.bgsessions.cli", "stop_command", "Stop a background session."),
    "rm": ("catui.bgsessions.cli", "rm_command", "Stop and remove a background session."),
    "respawn": ("catui.bgsessions.cli", "respawn_command", "Restart stopped background sessions from their transcripts."),
    "workflow": ("catui.cli.commands.workflow", "group", "Run, resume, list and show workflows (many agents as one program)."),
}


def load_subcommand(name: str) -> click.Command:
    module, attr, _ = SUBCOMMANDS[name]
    command: click.Command = getattr(importlib.import_module(module), attr)
    return command


class RootCommand(click.Command):
    """The root command; its help also lists the subcommands."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_text) for name, (_, _, help_text) in SUBCOMMANDS.items()])


@click.command(cls=RootCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("prompt", required=False)
@click.option("-p", "--print", "print_mode", is_flag=True, help="Print the answer and exit (non-interactive).")
@click.option(
    "--output-format",
    type=click.Choice(["text", "json", "stream-json"]),
    default="text",
    show_default=True,
    help="Print mode's output format.",
)
@click.option("--model", help="Model alias (sonnet, opus, haiku), full id, or provider:model.")
@click.option("--fallback-model", help="Model to switch to when the main model is overloaded.")
@click.option("--max-turns", type=int, help="Stop after this many model turns.")
@click.option("--max-budget-usd", "max_budget_usd", metavar="USD",
              help="Stop the run (sub-agents included) once it has cost this many US dollars.")
@click.option(
    "--permission-mode",
    type=click.Choice(["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]),
    help="Permission mode for this session.",
)
@click.option("--allowedTools", "--allowed-tools", "allowed_tools", multiple=True, help="Rules to allow, e.g. 'Bash(git:*)'.")
@click.option(
    "--disallowedTools", "--disallowed-tools", "disallowed_tools", multiple=True, help="Rules to deny."
)
@click.option(
    "--add-dir", "add_dirs", multiple=True, help="Another folder the file tools may use without asking."
)
@click.option("--append-system-prompt", help="Text appended to the system prompt.")
@click.option("--settings", "settings_arg", help="A settings file or JSON string, applied over the others.")
@click.option("--agents", "agents_json", help="Agent definitions as JSON: {name: {description, prompt, ...}}.")
@click.option("--agent", "agent", help="Run the main session as this agent (from .claude/agents, --agents, plugins).")
@click.option("--effort", help="Reasoning effort: low, medium, high, xhigh, max (or a positive integer).")
@click.option(
    "--max-thinking-tokens", "max_thinking_tokens", help="Extended thinking budget in tokens (0 = off, else >= 1024)."
)
@click.option("--plugin-dir", "plugin_dirs", multiple=True, help="Load a plugin from this folder.")
@click.option("--include-partial-messages", is_flag=True, help="stream-json: include stream events.")
@click.option("-c", "--continue", "continue_conversation", is_flag=True,
              help="Continue the latest session of this project.")
@click.option("-r", "--resume", "resume", is_flag=False, flag_value="", default=None, metavar="[ID]",
              help="Resume a session by id (without an id: pick one; print mode needs the id).")
@click.option("--session-id", help="Use this UUID as the new session's id.")
@click.option("--fork-session", is_flag=True, help="With --resume/--continue: continue under a new session id.")
@click.option("--verbose", is_flag=True, help="Show tracebacks and debug detail.")
@click.option("--input-format", type=click.Choice(["text", "stream-json"]), default="text", show_default=True,
              help="stream-json: read prompts and control requests as JSON lines on stdin (claude-agent-sdk).")
@click.option("--system-prompt", help="Replace catui's system prompt (an empty string: none).")
@click.option("--system-prompt-file", help="Replace catui's system prompt with this file's text.")
@click.option("--tools", help="The built-in tools to offer, comma-separated (\"default\": all, \"\": none).")
@click.option("--setting-sources", help="Settings files to read: a comma-separated list of user, project, local.")
@click.option("--mcp-config", "mcp_configs", multiple=True, help='MCP servers: a JSON string or file {"mcpServers": …}.')
@click.option("--strict-mcp-config", is_flag=True, help="Use only the --mcp-config servers.")
@click.option("--permission-prompt-tool", help="stdio: ask the driving program (control protocol) for approvals.")
@click.option("--thinking", help="Extended thinking: adaptive or disabled.")
@click.option("--replay-user-messages", is_flag=True,
              help="stream-json input: echo each prompt as a user message with its uuid (for rewind_files).")
@click.option("--include-hook-events", is_flag=True, help="stream-json: report every hook run (system/hook_started and hook_response events).")
@click.option("--forward-subagent-text", is_flag=True,
              help="stream-json: also show sub-agents' text and thinking (by default only their calls and results).")
@click.option("--dangerously-skip-permissions", is_flag=True, help="Start in bypassPermissions mode.")
@click.option("--allow-dangerously-skip-permissions", is_flag=True,
              help="Allow switching to bypassPermissions later in the session.")
@click.option("--no-session-persistence", "no_session_persistence", is_flag=True,
              help="Write no transcript for this session.")
@click.option("--await-initialize", is_flag=True, hidden=True)
@click.option("--initialize-fields", hidden=True)
@click.option("--permission-prompts", type=click.Choice(["host", "none"]), hidden=True)
@click.option("--plugin-dir-no-mcp", "plugin_dirs_no_mcp", multiple=True, hidden=True)
@click.option("--no-optional-locks", is_flag=True, hidden=True)
@click.option("-d", "--debug", is_flag=False, flag_value="all", default=None, hidden=True)
@click.option("--debug-file", hidden=True)
@click.option("--debug-to-stderr", is_flag=True, hidden=True)
@click.option("--workload", hidden=True)
@click.option("--hard-fail", is_flag=True, hidden=True)
@click.option("--porcelain", is_flag=True, hidden=True)
@click.option("--proactive", is_flag=True, hidden=True)
@click.option("--assistant", is_flag=True, hidden=True)
@click.option("--channels", multiple=True, hidden=True)
@click.option("--sdk-url", hidden=True)
@click.option("--managed-settings", hidden=True)
@click.option("--managed-settings-in-initialize", is_flag=True, hidden=True)
@click.option("--project-config-root", hidden=True)
@click.option("--task-budget", hidden=True)
@click.option("--betas", hidden=True)
@click.option("--json-schema", hidden=True)
@click.option("--resume-session-at", hidden=True)
@click.option("--resume-drops-turn", hidden=True)
@click.option("--session-mirror", is_flag=True, hidden=True)
@click.option("--thinking-display", hidden=True)
@click.version_option(None, "-v", "--version", package_name="catui", prog_name="catui",
                      message="%(version)s (catui)")
def root(**options: Any) -> None:
    """catui: a coding agent with Claude Code's sub-agent system.

    Run `catui -p "task"` for one answer, or `catui` for an interactive session.
    """
    # lazy: cli.run imports the whole application; `catui --help` and the subcommands never need it.
    # What the imports make (modules, classes) lives until the process ends, so the collector has nothing to
    # find in it: its ~70 collections during the imports cost ~15 ms (catui.lazy).
    # Frozen at once, so that the first collection after the imports does not walk all that they made (it would,
    # and again in the next older generation); settle_startup_objects freezes what the run builds in turn.
    gc.disable()
    try:
        from catui.cli.run import run_root
    finally:
        gc.freeze()
        gc.enable()

    run_root(options)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``catui`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    _tolerate_non_unicode_output()
    if "--bg" in args:
        from catui.bgsessions.cli import run_bg

        run_bg(args)
        return
    if args and args[0] in SUBCOMMANDS:
        command = load_subcommand(args[0])
        command.main(args=args[1:], prog_name=f"catui {args[0]}", standalone_mode=True)
        return
    try:
        root.main(args=args, prog_name="catui", standalone_mode=False)
    except click.UsageError as exc:
        # One line, like every other mistake catui reports; the full usage is one `catui --help` away.
        click.echo(f"catui: {exc.format_message()} (see catui --help)", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(1)


def _tolerate_non_unicode_output() -> None:
    from catui.cli.unicode_output import tolerate_non_unicode_output

    tolerate_non_unicode_output()
