"""Running the agent from the command line: print mode (text, json, stream-json) and the interactive entry."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from catui.app.build import RunOptions, build_app, first_prompt_content, start_app
from catui.app.interrupted_agents import handle_interrupted_agents
from catui.app.model_swap import on_command_model
from catui.app.output_format import StructuredResult
from catui.app.prompt import opening_blocks
from catui.app.tool_names import builtin_tool_names, tools_left_out
from catui.cli.run_support import deliver_idle_events, settle_startup_objects
from catui.cli.sdk_flags import (
    json_schema_result,
    mcp_config_servers,
    refuse_unsupported,
    setting_sources,
    system_prompt,
    thinking,
)
from catui.cli.stream.output import StreamJsonWriter, result_json, with_subagent_stats
from catui.commands.prompt import command_prompt, grant_for_run, refusal_events
from catui.errors import CatuiError, ConfigurationError
from catui.models.reasoning import parse_effort, thinking_from_budget
from catui.session.budget import BUDGET_SUBTYPE, check_budget_amount
from catui.session.compact_prompt import compact_events, compact_instructions
from catui.session.events import Event, ResultEvent
from catui.session.resume import check_new_session_id

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.cli.stream.turn_results import TurnResults

EXIT_ERROR = 1


def run_root(options: dict[str, Any]) -> None:
    """The root command's body: pick print or interactive mode and turn errors into one line."""
    # With stream-json output --verbose is Claude Code's required flag (claude-agent-sdk always passes it), not a
    # request for tracebacks: errors stay one line there.
    verbose = bool(options.get("verbose")) and options.get("output_format") != "stream-json"
    prompt = options.get("prompt")
    print_mode = bool(options.get("print_mode"))
    if options.get("input_format") == "stream-json":
        if options.get("output_format") != "stream-json":
            raise click.UsageError("--input-format stream-json needs --output-format stream-json")
        if prompt:
            raise click.UsageError("with --input-format stream-json the prompts come on stdin as JSON lines, "
                                   "not as an argument")
    elif print_mode and not prompt and not sys.stdin.isatty():
        prompt = sys.stdin.read()
    streaming = options.get("input_format") == "stream-json"
    start_debug_log(options)
    try:
        run_options = options_from_cli(options, interactive=not (print_mode or streaming))
        structured = json_schema_result(options.get("json_schema"))
        if structured is not None:
            if not (print_mode or streaming):
                raise click.UsageError("--json-schema needs print mode (-p) or --input-format stream-json")
            run_options = dataclasses.replace(
                run_options,
                extra_tools=[*run_options.extra_tools, structured.tool],
                append_system_prompt="\n\n".join(
                    a for a in (run_options.append_system_prompt, structured.instructions) if a),
            )
        if streaming:
            code = asyncio.run(stream_input_main(run_options, options, structured))
        elif print_mode:
            if not prompt or not prompt.strip():
                raise click.UsageError('print mode needs a prompt: catui -p "your task" (or pipe it on stdin)')
            code = asyncio.run(print_mode_main(run_options, prompt, options["output_format"], structured, options))
        else:
            # lazy: the terminal UI (~16 ms of screen, prompt and key-reading code) is not needed in print mode
            from catui.cli.tui.interactive import interactive_main

            code = asyncio.run(interactive_main(run_options, prompt))
    except click.UsageError:
        raise
    except CatuiError as exc:
        if verbose:
            traceback.print_exc()
        click.echo(f"catui: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(code)


def options_from_cli(options: dict[str, Any], *, interactive: bool) -> RunOptions:
    """The root command's parsed options as the app's :class:`RunOptions` (``--agents`` JSON checked here)."""
    flag_agents = None
    if options.get("agents_json"):
        try:
            flag_agents = json.loads(options["agents_json"])
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"--agents is not valid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(flag_agents, dict):
            raise ConfigurationError('--agents must be a JSON object: {"name": {"description": ..., "prompt": ...}}')
    cwd = Path.cwd()
    resume = options.get("resume")
    if resume == "":
        if not interactive:
            raise click.UsageError(
                "--resume needs a session id in print mode: catui -p --resume <session-id> \"task\" "
                "(or --continue for the latest session)"
            )
        # lazy: only a bare `catui -r` shows the list
        from catui.cli.tui.session_picker import pick_session

        resume = pick_session(cwd)
    if options.get("fork_session") and resume is None and not options.get("continue_conversation"):
        raise click.UsageError("--fork-session needs --resume ID or --continue: it forks an existing session")
    refuse_unsupported(options)
    permission_mode = options.get("permission_mode")
    if options.get("dangerously_skip_permissions"):
        if permission_mode not in (None, "bypassPermissions"):
            raise ConfigurationError(f"--dangerously-skip-permissions starts in bypassPermissions mode; "
                                     f"leave out --permission-mode {permission_mode}")
        permission_mode = "bypassPermissions"
    if options.get("resume_session_at") and not (resume or options.get("continue_conversation")):
        raise ConfigurationError("--resume-session-at needs --resume ID: it cuts the resumed conversation "
                                 "after that message")
    if options.get("resume_drops_turn") is not None and not options.get("resume_session_at"):
        raise ConfigurationError("--resume-drops-turn needs --resume-session-at: it checks what that cut drops")
    if options.get("session_id"):
        check_new_session_id(options["session_id"], cwd.resolve(), resuming=bool(
            (resume or options.get("continue_conversation")) and not options.get("fork_session")))
    sources = setting_sources(options.get("setting_sources"))
    builtin_names = builtin_tool_names(interactive=interactive)  # what --tools names the base tool set from
    return RunOptions(
        cwd=cwd,
        system_prompt=system_prompt(options),
        setting_sources=sources if sources is not None else ("user", "project", "local"),
        mcp_servers=mcp_config_servers(options.get("mcp_configs") or ()),
        strict_mcp_config=bool(options.get("strict_mcp_config")),
        model=options.get("model"),
        fallback_model=options.get("fallback_model"),
        max_turns=options.get("max_turns"),
        permission_mode=permission_mode,
        allowed_tools=list(options.get("allowed_tools") or ()),
        disallowed_tools=[*(options.get("disallowed_tools") or ()), *tools_left_out(options.get("tools"), builtin_names)],
        add_dirs=list(options.get("add_dirs") or ()),
        append_system_prompt=options.get("append_system_prompt"),
        settings_arg=options.get("settings_arg"),
        flag_agents=flag_agents,
        plugin_dirs=[*(options.get("plugin_dirs") or ()), *(options.get("plugin_dirs_no_mcp") or ())],
        interactive=interactive,
        include_partial_messages=bool(options.get("include_partial_messages")),
        resume=resume,
        continue_conversation=bool(options.get("continue_conversation")),
        fork_session=bool(options.get("fork_session")),
        session_id=options.get("session_id"),
        write_transcript=not options.get("no_session_persistence"),
        resume_session_at=options.get("resume_session_at") or None,
        resume_drops_turn=options.get("resume_drops_turn"),
        effort=parse_effort(options.get("effort"), "--effort"),
        thinking=thinking(options.get("thinking"))
        or thinking_from_budget(options.get("max_thinking_tokens"), "--max-thinking-tokens"),
        agent=options.get("agent") or None,
        max_budget_usd=_budget_option(options.get("max_budget_usd")),
        include_hook_events=bool(options.get("include_hook_events")),
    )


def forward_subagent_text(options: dict[str, Any]) -> bool:
    """``--forward-subagent-text`` or ``CLAUDE_CODE_FORWARD_SUBAGENT_TEXT=1``: show sub-agents' text in stream-json."""
    env = os.environ.get("CLAUDE_CODE_FORWARD_SUBAGENT_TEXT", "").strip().lower()
    return bool(options.get("forward_subagent_text")) or env in ("1", "true", "yes", "on")


def bypass_allowed(options: dict[str, Any], run_options: RunOptions) -> bool:
    """Whether a driver may switch the session to bypassPermissions later, as Claude Code allows it: when the
    session was started in that mode or with --allow-dangerously-skip-permissions."""
    return bool(options.get("allow_dangerously_skip_permissions") or options.get("dangerously_skip_permissions")
                or run_options.permission_mode == "bypassPermissions")


def start_debug_log(options: dict[str, Any]) -> None:
    """``--debug``, ``--debug-to-stderr``, ``--debug-file PATH`` (the SDKs pass them): catui's debug log there."""
    import logging

    handlers: list[logging.Handler] = []
    if options.get("debug_file"):
        try:
            handlers.append(logging.FileHandler(os.path.expanduser(options["debug_file"]), encoding="utf-8"))
        except OSError as exc:
            click.echo(f"catui: warning: --debug-file {options['debug_file']}: cannot write it ({exc.strerror})",
                       err=True)
    if options.get("debug") is not None or options.get("debug_to_stderr"):
        handlers.append(logging.StreamHandler(sys.stderr))
    if handlers:
        logging.basicConfig(level=logging.DEBUG, handlers=handlers,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _budget_option(value: str | None) -> float | None:
    """``--max-budget-usd`` as a positive amount; anything else is a one-line error saying what it needs."""
    if value is None:
        return None
    try:
        amount = float(value)
    except ValueError:
        amount = float("nan")
    return check_budget_amount(amount if amount == amount else value, "--max-budget-usd")


async def print_mode_main(
    run_options: RunOptions, prompt: str, output_format: str, structured: StructuredResult | None = None,
    cli_options: dict[str, Any] | None = None,
) -> int:
    """Run one prompt to completion (and any background agents it started); print the answer.

    With ``structured`` (``--json-schema``) the prompt's result carries the object the agent handed back,
    or is an error when it handed back none.
    """
    app = build_app(run_options)
    await start_app(app)
    settle_startup_objects(app)
    # Settings problems (a malformed permission rule, a bad value) are reported, never fatal.
    for warning in [*app.settings.warnings, *app.services.startup_warnings]:
        click.echo(f"catui: warning: {warning}", err=True)
    app.report_budget_warnings(lambda message: click.echo(f"catui: warning: {message}", err=True))
    await handle_interrupted_agents(app, interactive=False, say=lambda line: click.echo(f"catui: {line}", err=True))
    writer = (StreamJsonWriter(app, sys.stdout, forward_subagent_text=forward_subagent_text(cli_options or {}))
              if output_format == "stream-json" else None)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM,):
        try:
            loop.add_signal_handler(sig, app.session.abort)
        except (NotImplementedError, RuntimeError):
            pass
    mcp = app.services.mcp
    if mcp is not None:
        # The tool list is fixed before the first request, so the init event can list MCP tools too.
        mcp.on_warning = lambda message: click.echo(f"catui: warning: {message}", err=True)
        await mcp.ready()
    if writer:
        writer.init()
    final: ResultEvent | None = None
    try:
        instructions = compact_instructions(prompt)
        turn_origin: list[dict[str, Any] | None] = [None]
        numbered: TurnResults | None = None
        if output_format == "json" and app.services.compat.current:
            # lazy: only the current contract's json output numbers results here (stream-json's writer does its own)
            from catui.cli.stream.turn_results import TurnResults

            numbered = TurnResults(app)  # the last turn's result, numbered as stream-json numbers it
        shown: dict[str, Any] | None = None

        def notification_turn() -> None:
            if app.services.compat.current:
                from catui.cli.stream.turn_results import notification_turn_origin

                turn_origin[0] = notification_turn_origin(app)
            if writer:
                writer.notification_turn()

        events = (conversation_events(app, prompt, on_team_turn=writer.init if writer else None,
                                      on_notification_turn=notification_turn)
                  if instructions is None else compact_events(app.session, instructions))
        async for event in events:
            if isinstance(event, ResultEvent) and event.agent_id is None and structured is not None:
                # The prompt's own result must carry the object; notification turns' need not.
                event = structured.finish(event, required=final is None)
                structured.start_turn()
            if writer:
                writer.write(event)
            if isinstance(event, ResultEvent) and event.agent_id is None:
                final = event
                if numbered is not None:
                    shown = with_subagent_stats(result_json(event), app)
                    if turn_origin[0] is not None:
                        shown = {**shown, "origin": turn_origin[0]}
                    shown = numbered.stamp(shown, event.request_timings)
    finally:
        await app.aclose()
    teams = (app.services.subagents.teams if app.services.subagents is not None else None)
    for line in teams.shutdown_log if teams is not None else []:
        click.echo(f"catui: {line}", err=True)
    if final is None:
        click.echo("catui: the run ended without a result", err=True)
        return EXIT_ERROR
    if output_format == "text":
        if final.is_error:
            click.echo(f"catui: {final.result}", err=True)
        else:
            click.echo(final.result)
    elif output_format == "json":
        click.echo(json.dumps(shown if shown is not None else with_subagent_stats(result_json(final), app)))
    return EXIT_ERROR if final.is_error else 0


async def stream_input_main(
    run_options: RunOptions, options: dict[str, Any], structured: StructuredResult | None = None
) -> int:
    """``--input-format stream-json``: serve a driven conversation (catui.cli.stream.session)."""
    # lazy: the control protocol's modules are needed only when a program drives catui
    from catui.cli.stream.session import StreamSession
    from catui.cli.stream.session_state import reporter_from_env

    def warn(line: str) -> None:
        click.echo(f"catui: {line}", err=True)

    # --permission-prompts none: nobody answers permission questions, so a call that would ask is refused
    prompt_tool = None if options.get("permission_prompts") == "none" else options.get("permission_prompt_tool")
    session = StreamSession(run_options, permission_prompt_tool=prompt_tool,
                            out=sys.stdout, warn=warn, structured=structured,
                            report_state=lambda write_line: reporter_from_env(os.environ, write_line),
                            replay_user_messages=bool(options.get("replay_user_messages")),
                            forward_subagent_text=forward_subagent_text(options),
                            await_initialize=bool(options.get("await_initialize")),
                            bypass_allowed=bypass_allowed(options, run_options),
                            session_mirror=bool(options.get("session_mirror")))
    return await session.run()


async def conversation_events(
    app: AgentApp, prompt: str, *, on_team_turn: Callable[[], None] | None = None,
    on_notification_turn: Callable[[], None] | None = None,
) -> AsyncIterator[Event]:
    """The main session's events for one prompt, then for each background-agent notification that follows.

    Print mode does not exit while background agents run: after the parent's turn ends it waits for
    their notifications and gives each to the parent as a new turn, as Claude Code does. A lead's
    teammates' messages start new turns the same way (``TeamCoordinator.next_lead_input``); each such
    turn is announced through ``on_team_turn`` (stream-json: its own init event, as observed), and a
    notification's through ``on_notification_turn`` (its result's ``origin``).
    """
    command = await command_prompt(app, prompt)
    if command is not None and command.error is not None:  # an unknown command, or a shell line that may not run
        async for event in refusal_events(app, command):
            yield event
        return
    if command is not None:
        content: Any = [*opening_blocks(app), *command.blocks]
        grant_for_run(app.session, command.rules)
    else:
        content = first_prompt_content(app, prompt)
    started = time.monotonic()
    budget = app.services.budget
    idle: asyncio.Queue[Event] = asyncio.Queue()
    restore = deliver_idle_events(app.session, idle)
    try:
        while True:
            result: ResultEvent | None = None
            # a command's `model:` holds for its own prompt only
            model = command.skill.model if command is not None and command.skill is not None else None
            command = None
            async for event in on_command_model(app, model, app.session.run(content)):
                if isinstance(event, ResultEvent) and event.agent_id is None:
                    result = event
                yield event
            waiter = app.tasks.next_notification
            if waiter is None or result is None or app.session.ctx.abort.is_set():
                return
            teams = app.leading_team()
            # With a team, teammates' messages start lead turns too (and print mode ends the team: teams/).
            # While the parent waits, a background agent may spend past --max-budget-usd: the budget aborts
            # the session (ending the wait) and stops them; the run then ends with the budget's result.
            next_input = waiter() if teams is None else teams.next_lead_input(waiter)
            pending = asyncio.ensure_future(_unless_aborted(next_input, app.session.ctx.abort))
            try:
                # Background agents keep working while the parent waits: their task_progress events
                # (and messages) go out as they happen, not only those emitted during a parent turn.
                while not pending.done() or not idle.empty():
                    if idle.empty():
                        getter = asyncio.ensure_future(idle.get())
                        await asyncio.wait({pending, getter}, return_when=asyncio.FIRST_COMPLETED)
                        if not getter.done():
                            getter.cancel()
                            continue
                        yield getter.result()
                    else:
                        yield idle.get_nowait()
            finally:
                if not pending.done():
                    pending.cancel()
                    with contextlib.suppress(BaseException):
                        await pending
            notification = pending.result()
            if budget is not None and budget.exceeded:
                yield app.session.result_event(BUDGET_SUBTYPE, True, budget.describe(), started=started)
                return
            if notification is None:
                return
            if teams is not None and on_team_turn is not None:
                on_team_turn()
            elif teams is None and on_notification_turn is not None:
                on_notification_turn()
            content = notification
    finally:
        restore()


async def _unless_aborted(waiting: Any, abort: asyncio.Event) -> Any:
    """Await ``waiting`` unless ``abort`` is set first (SIGTERM while background agents run): then None.

    Giving up is safe: a notification is taken only when it is returned. The
    agents themselves are stopped, and recorded as stopped, by ``app.aclose()``.
    """
    waiter = asyncio.ensure_future(waiting)
    aborted = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({waiter, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborted.cancel()
        if not waiter.done():
            waiter.cancel()
            with contextlib.suppress(BaseException):
                await waiter
    return waiter.result() if not waiter.cancelled() else None


def describe_event(event: Event) -> str:
    return type(event).__name__
