"""``/rewind``: put the files the agents changed back as they were before an earlier prompt.

Needs file checkpointing (``CATUI_FILE_CHECKPOINTING=1``; see
:mod:`catui.session.file_history`). Lists the prompts whose turns changed files, oldest first, and
restores the files to their state before the chosen one. The conversation itself is not rewound.
"""

from __future__ import annotations

from catui.cli.tui.slash_commands import CommandHost, SlashCommand
from catui.errors import ConfigurationError

REWIND_USAGE = "/rewind [N]"


async def rewind_command(host: CommandHost, argument: str) -> None:
    """``/rewind [N]``: list the prompts that changed files; restore the files to before prompt N."""
    history = host.app.session.config.file_history
    if history is None:
        host.say("File checkpointing is off, so there is nothing to rewind: start catui with "
                 "CATUI_FILE_CHECKPOINTING=1 to keep the files' state before each prompt.", "dim")
        return
    checkpoints = history.checkpoints()
    if not checkpoints:
        host.say("No file has been changed by a file tool in this session yet.", "dim")
        return
    choice = argument.strip()
    if not choice:
        for number, point in enumerate(checkpoints, 1):
            count = len(point.files)
            host.say(f"  {number}. {point.preview or '(no text)'}  · {count} file{'s' if count != 1 else ''}")
        answer = await host.ask("Rewind files to before which prompt? (number, Enter to cancel) ")
        if answer is None or not answer.strip():
            host.say("Nothing rewound.", "dim")
            return
        choice = answer.strip()
    if not choice.isdigit() or not 1 <= int(choice) <= len(checkpoints):
        raise ConfigurationError(f"{choice!r} is not one of the prompts listed (1 to {len(checkpoints)}); "
                                 f"usage: {REWIND_USAGE}")
    point = checkpoints[int(choice) - 1]
    outcome = host.app.rewind_files(point.prompt_uuid)
    parts = [f"restored {len(outcome.restored)}", f"removed {len(outcome.removed)}"]
    host.say(f"Files as before “{point.preview}”: {', '.join(parts)}.")
    for path in [*outcome.restored, *outcome.removed]:
        host.say(f"  {path}", "dim")


REWIND_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("rewind", "put files back as they were before an earlier prompt", rewind_command, "[N]"),
)
