"""Recognise shell commands that only read, so that they run without approval like Read and Grep do.

Command by command as Claude Code 2.1.92 decides (settled against the real one; the table test in
tests/test_permissions_bash_readonly.py): a list of commands that only read whatever their arguments
(``cat``, ``sleep``, ``which``…), commands that only read with no argument (``pwd``, ``whoami``), and
option tables (catui.permissions.bash_flag_tables) for the rest (``grep``, ``sort``, ``sed -n``, ``git
log``…): every option must be in the command's table, with an argument of the kind it takes, and a few
commands have a further check (``git branch NAME`` creates a branch, ``date STRING`` sets the clock).

catui adds its own limits on top: every part of a compound command (``a | b && c``) must be read-only,
no output redirection to a file, no command or variable substitution, and every path-like argument must
stay inside the working directories. Anything unsure is not read-only (and so is asked for).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from catui.permissions.bash_flag_tables import OPTIONS_AFTER_DOUBLE_DASH, SAFE_FLAGS
from catui.permissions.rules import command_parts, strip_wrappers, within_directories

# Commands that only read whatever their arguments (Claude Code 2.1.92's list; its option tables cover the rest).
READ_ONLY_COMMANDS: frozenset[str] = frozenset(
    {
        "cal", "uptime", "cat", "head", "tail", "wc", "stat", "strings", "hexdump", "od", "nl", "id", "uname",
        "free", "df", "du", "locale", "groups", "nproc", "basename", "dirname", "realpath", "cut", "paste", "tr",
        "column", "tac", "rev", "fold", "expand", "unexpand", "fmt", "comm", "cmp", "numfmt", "readlink", "diff",
        "true", "false", "sleep", "which", "type", "expr", "test", "getconf", "seq", "tsort", "pr", "echo", "ls",
    }
)
ARGUMENTS_NOT_PATHS: frozenset[str] = frozenset({
    "basename", "dirname", "echo", "expr", "seq", "sleep", "true", "false", "cal", "date", "numfmt", "getconf",
    "uname", "id", "groups", "locale", "nproc", "uptime", "free", "hostname", "which", "type", "du", "df",
})
"""Commands whose arguments name no file whose contents they read (``du`` and ``df`` report sizes only): a path
among them may lie outside the working directories, as Claude Code allows."""
READ_ONLY_PREFIXES: tuple[tuple[str, ...], ...] = (("docker", "ps"), ("docker", "images"))
ONLY_WITHOUT_ARGUMENTS: frozenset[str] = frozenset({"pwd", "whoami", "alias"})
EXACT_COMMANDS: frozenset[tuple[str, ...]] = frozenset({
    ("claude", "-h"), ("claude", "--help"), ("node", "-v"), ("node", "--version"), ("python", "--version"),
    ("python3", "--version"), ("ip", "addr"),
})
FIND_ACTIONS: frozenset[str] = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fls", "-fprintf"})
JQ_UNSAFE = re.compile(r"(?:^|\s)(?:-f\b|--from-file|--rawfile|--slurpfile|--run-tests|-L\b|--library-path)"
                       r"|\benv\b|\$ENV\b")
XARGS_TARGETS: frozenset[str] = frozenset({"echo", "printf", "wc", "grep", "head", "tail"})
"""What ``xargs`` may run and stay read-only."""
SED_PRINT = re.compile(r"^(?:(?:\d+|\$)(?:,(?:\d+|\$))?|/[^/]*/)?p$")
"""A sed script that only prints lines (``5p``, ``1,$p``, ``/re/p``); with ``-n`` such a sed only reads."""

_HARMLESS_REDIRECTS = re.compile(r"(?:\d?>&\d|&?\d?>\s*/dev/null)")
_OPTION = re.compile(r"^-[a-zA-Z0-9_-]")


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
    if not words or not words_read_only(words):
        return False
    return words[0] in ARGUMENTS_NOT_PATHS or _paths_inside(words[1:], working_directories, cwd)


def words_read_only(words: list[str]) -> bool:
    """Whether one simple command (its words, as the shell splits them) only reads, as Claude Code judges it."""
    table_entry = _table_entry(words)
    if table_entry is not None:
        name, start = table_entry
        return _options_read_only(words, start, name) and _extra_check(name, words[start:])
    name, args = words[0], words[1:]
    if name in ONLY_WITHOUT_ARGUMENTS:
        return not args
    if tuple(words) in EXACT_COMMANDS or name in READ_ONLY_COMMANDS:
        return True
    if any(tuple(words[: len(prefix)]) == prefix for prefix in READ_ONLY_PREFIXES):
        return True
    if name == "cd":
        return len(args) <= 1
    if name == "find":
        return not any(arg in FIND_ACTIONS for arg in args)
    if name == "history":
        return not args or (len(args) == 1 and args[0].isdigit())
    if name == "arch":
        return not args or args in (["-h"], ["--help"])
    if name == "ifconfig":
        return not args or (len(args) == 1 and args[0][:1].isalpha())
    if name == "uniq":  # with a file argument uniq may write its output file
        return all(arg.startswith("-") or arg.isdigit() for arg in args)
    if name == "jq":
        return bool(args) and not JQ_UNSAFE.search(" ".join(args))
    return False


def _table_entry(words: list[str]) -> tuple[str, int] | None:
    """(the option table's key, the index of the first word after it), the longest key that ``words`` start with."""
    best: tuple[str, int] | None = None
    for length in (3, 2, 1):
        if len(words) >= length:
            key = " ".join(words[:length])
            if key in SAFE_FLAGS:
                best = (key, length)
                break
    return best


def _options_read_only(words: list[str], start: int, name: str) -> bool:
    """Every option after ``start`` is in the command's table, with an argument of the kind it takes."""
    table = SAFE_FLAGS[name]
    command = words[0]
    for word in words[start:]:
        if "{" in word and ("," in word or ".." in word):
            return False  # brace expansion could name anything
    index = start
    while index < len(words):
        word = words[index]
        if command == "xargs" and (not word.startswith("-") or word == "--"):
            target = words[index + 1] if word == "--" and index + 1 < len(words) else word
            return target in XARGS_TARGETS
        if word == "--":
            if name in OPTIONS_AFTER_DOUBLE_DASH:
                index += 1
                continue
            return True
        if not (len(word) > 1 and _OPTION.match(word)):
            index += 1
            continue
        flag, has_value, value = word.partition("=")
        kind = table.get(flag)
        if kind is None:
            if command == "git" and flag[1:].isdigit():  # git log -5
                index += 1
                continue
            if command in ("grep", "rg") and not flag.startswith("--") and len(flag) > 2 and flag[2:].isdigit() \
                    and table.get(flag[:2]) in ("number", "string"):
                index += 1  # grep -A2
                continue
            if not flag.startswith("--") and len(flag) > 2 and all(table.get("-" + c) == "none" for c in flag[1:]):
                index += 1  # bundled switches: grep -rn
                continue
            return False
        if kind == "none":
            if has_value:
                return False
            index += 1
            continue
        if has_value:
            index += 1
        else:
            following = words[index + 1] if index + 1 < len(words) else None
            if following is None or (len(following) > 1 and _OPTION.match(following)):
                return False
            value = following
            index += 2
        if kind == "string" and value.startswith("-") and not (name.startswith("git") and flag == "--sort"):
            return False
        if not _value_fits(value, kind):
            return False
    return True


def _value_fits(value: str, kind: str) -> bool:
    if kind == "number":
        return value.isdigit()
    if kind == "string":
        return True
    if kind == "char":
        return len(value) == 1
    return value == kind  # "{}" and "EOF": exactly that


def _extra_check(name: str, args: list[str]) -> bool:
    """The per-command checks the option tables cannot express (a git subcommand's positional words, …)."""
    positional = [a for a in args if a and not a.startswith("-")]
    if name == "git reflog":
        return not (positional and positional[0] in ("expire", "delete", "exists"))
    if name == "git remote show":
        rest = [a for a in args if a != "-n"]
        return len(rest) == 1 and re.fullmatch(r"[A-Za-z0-9_-]+", rest[0]) is not None
    if name == "git remote":
        return all(a in ("-v", "--verbose") for a in args)
    if name in ("git tag", "git branch"):
        return _lists_only(name, args)
    if name == "sed":
        return _sed_prints_only(args)
    if name == "ps":
        return not any(not a.startswith("-") and re.fullmatch(r"[a-zA-Z]*e[a-zA-Z]*", a) for a in args)
    if name == "date":
        return _date_reads_only(args)
    if name == "hostname":
        return all(a.startswith("-") for a in args)
    if name == "lsof":
        return not any(a.startswith("+m") for a in args)
    if name == "tput":
        return _tput_reads_only(args)
    if name == "pyright":
        return not any(a in ("--watch", "-w") for a in args)
    return True


def _lists_only(name: str, args: list[str]) -> bool:
    """``git tag`` / ``git branch`` with a name creates one; only listing forms are read-only."""
    takes_value = ({"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format",
                    "-n"} if name == "git tag" else {"--contains", "--no-contains", "--points-at", "--sort"})
    filters = {"--merged", "--no-merged"} if name == "git branch" else set()
    listing, previous, index = False, "", 0
    while index < len(args):
        word = args[index]
        if word.startswith("-"):
            if word in ("--list", "-l") or (word[1:2] != "-" and len(word) > 2 and "=" not in word and "l" in word[1:]):
                listing = True
            previous = word.split("=")[0]
            index += 2 if word in takes_value and "=" not in word else 1
            continue
        if not listing and previous not in filters:
            return False
        index += 1
    return True


def _sed_prints_only(args: list[str]) -> bool:
    """``sed -n`` with one script that only prints lines (a substitution, an in-place edit, several scripts: asked)."""
    quiet = any(a in ("-n", "--quiet", "--silent") or (a.startswith("-") and not a.startswith("--") and "n" in a[1:])
                for a in args)
    scripts: list[str] = []
    index, explicit = 0, False
    while index < len(args):
        word = args[index]
        if word in ("-e", "--expression") and index + 1 < len(args):
            scripts.append(args[index + 1])
            explicit = True
            index += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
            explicit = True
        elif not word.startswith("-") and not explicit and not scripts:
            scripts.append(word)
        index += 1
    return quiet and len(scripts) == 1 and SED_PRINT.match(scripts[0].strip()) is not None


def _date_reads_only(args: list[str]) -> bool:
    """``date`` shows a date; a positional word other than ``+FORMAT`` would set the clock."""
    takes_value = {"-d", "--date", "-r", "--reference", "--iso-8601", "--rfc-3339"}
    index = 0
    while index < len(args):
        word = args[index]
        if word.startswith("-"):
            index += 2 if word in takes_value else 1
        elif word.startswith("+"):
            index += 1
        else:
            return False
    return True


def _tput_reads_only(args: list[str]) -> bool:
    changes = {"init", "reset", "rs1", "rs2", "rs3", "is1", "is2", "is3", "iprog", "if", "rf", "clear", "flash",
               "mc0", "mc4", "mc5", "mc5i", "mc5p", "pfkey", "pfloc", "pfx", "pfxl", "smcup", "rmcup"}
    index, ended = 0, False
    while index < len(args):
        word = args[index]
        if word == "--":
            ended = True
        elif not ended and word.startswith("-"):
            if word == "-S" or (not word.startswith("--") and len(word) > 2 and "S" in word):
                return False
            if word == "-T":
                index += 1
        elif word in changes:
            return False
        index += 1
    return True


def _unquoted(text: str) -> str:
    """``text`` with quoted stretches removed, so that a quoted '>' is not taken for a redirection."""
    return re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", "", text)


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
