"""Recognise shell commands that only read, so that they run without approval like Read and Grep do.

Conservative by design: a command counts as read-only only if every part of
it (``a | b && c``) is a known reading command with no option that writes or
runs something else, it has no output redirection to a file, no command or
variable substitution, and every path-like argument stays inside the working
directories. Anything unsure is not read-only (and so is asked for).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from catui.permissions.rules import command_parts, strip_wrappers, within_directories

# Commands that never change anything, whatever their arguments (apart from the options listed below).
READ_ONLY_COMMANDS: frozenset[str] = frozenset(
    {
        "cd", "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "which", "type", "file", "stat", "du",
        "df", "tree", "sort", "uniq", "cut", "diff", "cmp", "grep", "egrep", "fgrep", "rg", "find",
        "basename", "dirname", "realpath", "readlink", "date", "whoami", "id", "uname", "printenv",
        "true", "false", "test", "[", "nl", "od", "hexdump", "jq", "column", "seq", "sha256sum",
        "sha1sum", "md5sum", "shasum", "cksum", "comm", "paste", "fold", "rev", "tac", "strings",
    }
)

# Options that make an otherwise reading command write or execute.
_UNSAFE_OPTIONS: dict[str, tuple[str, ...]] = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sort": ("-o", "--output", "--compress-program"),
    "tree": ("-o",),
    "date": ("-s", "--set"),
    "file": ("-C", "--compile"),
    "rg": ("--pre",),
}

# git subcommands that only read; the ones with a callable check read only in some forms.
_GIT_READ_ONLY: frozenset[str] = frozenset(
    {"status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog", "grep",
     "cat-file", "ls-tree", "rev-list", "show-ref", "merge-base", "whatchanged", "count-objects"}
)
_GIT_LISTING_ONLY: frozenset[str] = frozenset({"branch", "tag", "remote", "stash"})
_GIT_LISTING_OPTIONS: frozenset[str] = frozenset(
    {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-l", "--list", "--show-current", "--merged",
     "--no-merged", "--contains", "--sort", "-n"}
)

_HARMLESS_REDIRECTS = re.compile(r"(?:\d?>&\d|&?\d?>\s*/dev/null)")


def is_read_only_command(command: str, working_directories: Sequence[Path], cwd: Path) -> bool:
    """Whether ``command`` only reads, inside ``working_directories`` (empty: anywhere)."""
    if not command.strip() or "$" in command or "`" in command:
        return False
    parts = command_parts(command)
    return bool(parts) and all(_part_is_read_only(part, working_directories, cwd) for part in parts)


def _part_is_read_only(part: str, working_directories: Sequence[Path], cwd: Path) -> bool:
    without_harmless = _HARMLESS_REDIRECTS.sub(" ", part)
    if ">" in _unquoted(without_harmless):
        return False
    try:
        words = shlex.split(strip_wrappers(without_harmless.replace("<", " < ")))
    except ValueError:
        return False
    words = [w for w in words if w != "<"]
    if not words:
        return False
    name, args = words[0], words[1:]
    if name == "git":
        return _git_read_only(args) and _paths_inside(args, working_directories, cwd)
    if name not in READ_ONLY_COMMANDS:
        return False
    unsafe = _UNSAFE_OPTIONS.get(name, ())
    if any(arg == opt or arg.startswith(opt + "=") for arg in args for opt in unsafe):
        return False
    return _paths_inside(args, working_directories, cwd)


def _unquoted(text: str) -> str:
    """``text`` with quoted stretches removed, so that a quoted '>' is not taken for a redirection."""
    return re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", "", text)


def _git_read_only(args: list[str]) -> bool:
    # Global options before the subcommand (-C dir, -c k=v) could point anywhere or change behaviour.
    if not args or args[0].startswith("-"):
        return False
    sub, rest = args[0], args[1:]
    if sub in _GIT_READ_ONLY:
        # --output writes a file; -O / --open-files-in-pager runs a program.
        return not any(
            a in ("--output", "-o", "-O") or a.startswith(("--output=", "--open-files-in-pager", "-O"))
            for a in rest
        )
    if sub in _GIT_LISTING_ONLY:
        if sub == "stash":
            return rest[:1] == ["list"] and all(a.startswith("-") for a in rest[1:])
        return all(a in _GIT_LISTING_OPTIONS for a in rest)
    if sub == "config":
        return bool(rest) and rest[0] in ("--get", "--get-all", "--list", "-l", "--get-regexp")
    return False


def _paths_inside(args: list[str], working_directories: Sequence[Path], cwd: Path) -> bool:
    if not working_directories:
        return True
    for arg in args:
        if arg.startswith("-") and "=" not in arg:
            continue
        value = arg.split("=", 1)[1] if arg.startswith("-") else arg
        if not (value.startswith(("/", "~")) or ".." in value):
            continue
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = cwd / path
        if not within_directories(Path(os.path.normpath(path)), tuple(working_directories)):
            return False
    return True
