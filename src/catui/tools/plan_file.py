"""The plan file: where the main agent writes its plan while plan mode is on.

Each session has one plan file, ``<catui home>/plans/<slug>.md`` (Claude Code
keeps its plans under ``~/.claude/plans/``). The slug is three words derived
from the session id, so the same session always finds the same file. In plan
mode Write and Edit may change exactly this file (see
:mod:`catui.permissions.decide`); ExitPlanMode reads it and presents it for
approval.

The agent learns the path from EnterPlanMode's result and from a short
system reminder that the session adds to the next message it sends after
plan mode starts, once per entry into plan mode (:func:`plan_mode_reminder`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from catui.paths import catui_home

# Three word lists; a slug takes one of each, picked by the session id's hash (64**3 combinations).
_ADJECTIVES = (
    "amber", "brave", "calm", "clever", "cosy", "crisp", "curious", "dapper", "eager", "fancy", "fluffy",
    "gentle", "giddy", "golden", "happy", "hazy", "humble", "jolly", "keen", "kind", "lively", "lucky",
    "mellow", "merry", "misty", "nimble", "noble", "patient", "peppy", "plucky", "polite", "proud", "quiet",
    "quick", "rosy", "royal", "rustic", "shiny", "silent", "silky", "sleepy", "snug", "soft", "spry",
    "steady", "sunny", "swift", "tidy", "tiny", "tranquil", "velvet", "vivid", "warm", "whimsical", "wild",
    "wise", "witty", "zesty", "bright", "bold", "breezy", "cheerful", "dreamy", "frosty",
)
_VERBS = (
    "baking", "bouncing", "brewing", "chasing", "climbing", "crafting", "dancing", "dashing", "digging",
    "drifting", "dreaming", "floating", "folding", "gliding", "growing", "hopping", "humming", "hunting",
    "juggling", "jumping", "knitting", "leaping", "lounging", "marching", "mixing", "napping", "nesting",
    "painting", "pouncing", "prancing", "purring", "racing", "reading", "rolling", "roaming", "running",
    "sailing", "singing", "skipping", "sleeping", "sliding", "snoozing", "spinning", "sprinting", "stalking",
    "stirring", "strolling", "swimming", "swinging", "tapping", "tumbling", "twirling", "waddling", "wading",
    "wandering", "weaving", "whistling", "wiggling", "winking", "yawning", "zooming", "basking", "blinking",
    "chirping",
)
_NOUNS = (
    "acorn", "badger", "biscuit", "blossom", "breeze", "bubble", "button", "canyon", "cloud", "comet",
    "cookie", "cricket", "dawn", "dolphin", "ember", "falcon", "feather", "fern", "firefly", "fox", "garden",
    "glacier", "harbor", "hedgehog", "island", "kettle", "kitten", "lantern", "lemon", "lighthouse", "maple",
    "meadow", "meerkat", "mitten", "moon", "muffin", "nebula", "otter", "owl", "panda", "pebble", "penguin",
    "pine", "planet", "pond", "puffin", "quill", "rabbit", "river", "robin", "sparrow", "spruce", "squirrel",
    "star", "sunbeam", "teapot", "thistle", "tiger", "tulip", "walrus", "willow", "wombat", "yarn", "zephyr",
)

def plan_slug(session_id: str) -> str:
    """Three words, stable for a session id: ``keen-stirring-sunbeam``."""
    digest = hashlib.sha256(session_id.encode("utf-8")).digest()
    return f"{_ADJECTIVES[digest[0] % 64]}-{_VERBS[digest[1] % 64]}-{_NOUNS[digest[2] % 64]}"


def plans_dir() -> Path:
    """``<catui home>/plans``."""
    return catui_home() / "plans"


def plan_file_for_session(session_id: str) -> Path:
    """The plan file of a session: ``<catui home>/plans/<slug>.md`` (the file need not exist)."""
    return plans_dir() / f"{plan_slug(session_id)}.md"


def read_plan(path: Path | None) -> str | None:
    """The plan file's text, or None when there is no file, it cannot be read, or it holds only whitespace."""
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return text if text.strip() else None


def plan_mode_reminder(ctx: Any) -> str | None:
    """The system reminder to add to the next message sent to the model, or None.

    Returned once per entry into plan mode, and only for the main agent (sub-agents
    cannot present a plan). ``ctx`` is the agent's ToolContext; leaving plan mode
    re-arms the reminder for the next entry.
    """
    state = ctx.plan
    permissions = ctx.permissions
    if permissions.mode != "plan":
        state.reminder_sent = False
        return None
    if ctx.agent_id is not None or permissions.plan_file is None or state.reminder_sent:
        return None
    state.reminder_sent = True
    return "<system-reminder>\n" + plan_mode_instructions(permissions.plan_file) + "\n</system-reminder>"


def plan_mode_instructions(plan_file: Path) -> str:
    """What the model is told when plan mode starts: the rules and where the plan goes."""
    if read_plan(plan_file) is not None:
        where = (
            f"A plan file from earlier planning already exists at {plan_file}. Read it first, then update it "
            "with Edit or rewrite it with Write."
        )
    else:
        where = f"Write your plan to the plan file {plan_file} with the Write tool (it does not exist yet)."
    return (
        "Plan mode is on: make no changes to the system. Only read-only tools run (Read, Glob, Grep, "
        "read-only shell commands); the plan file is the one file you may create and edit. "
        f"{where} Explore the code, design the change and put the plan in that file: the files to change and "
        "the steps, concise. Then call ExitPlanMode, which shows the plan file to the user for approval."
    )
