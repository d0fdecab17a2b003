"""Bash permission rules: splitting a command line into simple commands and matching one against a rule.

A command joined with ``&&``, ``;``, ``|`` … is checked part by part (command
substitutions included); wrappers such as ``timeout`` or ``nice`` and leading
``VAR=value`` assignments are seen through.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Commands that run another command unchanged; a rule about the inner command applies through them.
_WRAPPERS = ("timeout", "nice", "nohup", "time", "stdbuf")


def command_pattern_matches(pattern: str, command: str) -> bool:
    """Match one simple command against a Bash rule's content.

    No ``*``: the whole command, exactly. ``prefix:*`` or ``prefix *`` (the only
    wildcard, at the end): the prefix alone or followed by a space. Otherwise
    ``*`` matches any run of characters (``\\*`` is a literal star).
    """
    command = command.strip()
    pattern = pattern.strip()
    for suffix in (":*", " *"):
        head = pattern[: -len(suffix)]
        if pattern.endswith(suffix) and not head.endswith("\\") and "*" not in head.replace("\\*", ""):
            prefix = head.replace("\\*", "*").rstrip()
            return command == prefix or command.startswith(prefix + " ")
    if "*" not in pattern.replace("\\*", ""):
        return command == pattern.replace("\\*", "*")
    return _command_regex(pattern).fullmatch(command) is not None


@lru_cache(maxsize=512)
def _command_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    for piece in re.split(r"(\\\*|\*)", pattern):
        if piece == "*":
            out.append(".*")
        elif piece == "\\*":
            out.append(re.escape("*"))
        else:
            out.append(re.escape(piece))
    return re.compile("".join(out), re.DOTALL)


def command_parts(command: str) -> list[str]:
    """Split a shell command into its simple commands at ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines.

    Quotes are respected. The text inside ``$(…)`` and backticks is returned
    too, as parts of its own, so deny rules see it; an allow rule never covers
    a part that contains a substitution.
    """
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    n = len(command)
    while i < n:
        ch = command[i]
        if quote == "'":
            current.append(ch)
            if ch == "'":
                quote = None
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            current.append(command[i : i + 2])
            i += 2
            continue
        if quote == '"':
            current.append(ch)
            if ch == '"':
                quote = None
            i += 1
            continue
        if ch in ("'", '"'):
            quote = ch
            current.append(ch)
            i += 1
            continue
        two = command[i : i + 2]
        if two in ("&&", "||", "|&", ";;"):
            _flush(current, parts)
            i += 2
            continue
        if ch == "&" and ((i + 1 < n and command[i + 1] == ">") or (i > 0 and command[i - 1] in "<>")):
            current.append(ch)  # redirections such as &> and 2>&1 are not separators
            i += 1
            continue
        if ch in ";|&\n":
            _flush(current, parts)
            i += 1
            continue
        current.append(ch)
        i += 1
    _flush(current, parts)
    for inner in _substitutions(command):
        parts.extend(command_parts(inner))
    return parts


def _flush(current: list[str], parts: list[str]) -> None:
    text = "".join(current).strip()
    # Subshell parentheses and group braces do not change which command runs: '(cd x' and 'make)'.
    while text[:1] in ("(", "{"):
        text = text[1:].strip()
    for opener, closer in (("(", ")"), ("{", "}")):
        while text.endswith(closer) and text.count(closer) > text.count(opener):
            text = text[:-1].rstrip()
    if text:
        parts.append(text)
    current.clear()


def _substitutions(command: str) -> list[str]:
    found: list[str] = []
    in_single = False
    i = 0
    while i < len(command):
        ch = command[i]
        if ch == "'" and not in_single:
            in_single = True
        elif ch == "'" and in_single:
            in_single = False
        elif not in_single and command.startswith("$(", i):
            depth = 1
            j = i + 2
            while j < len(command) and depth:
                if command[j] == "(":
                    depth += 1
                elif command[j] == ")":
                    depth -= 1
                j += 1
            found.append(command[i + 2 : j - 1])
            i = j
            continue
        elif not in_single and ch == "`":
            end = command.find("`", i + 1)
            if end < 0:
                break
            found.append(command[i + 1 : end])
            i = end + 1
            continue
        i += 1
    return found


def is_exact_pattern(pattern: str) -> bool:
    """Whether a Bash rule's content has no wildcard (an unescaped ``*``)."""
    return "*" not in pattern.replace("\\*", "")


def _has_substitution(part: str) -> bool:
    return "$(" in part or "`" in part or "<(" in part or ">(" in part


def strip_wrappers(command: str) -> str:
    """Remove ``timeout 10``, ``nice -n 5``, ``nohup``, ``time`` … in front of a command."""
    words = command.split()
    changed = True
    while changed and words:
        changed = False
        if words[0] in _WRAPPERS:
            wrapper = words.pop(0)
            changed = True
            while words and words[0].startswith("-"):
                option = words.pop(0)
                if wrapper == "nice" and option == "-n" and words:
                    words.pop(0)
                if wrapper == "timeout" and option in ("-s", "-k", "--signal", "--kill-after") and words:
                    words.pop(0)
            if wrapper == "timeout" and words and re.fullmatch(r"[0-9.]+[smhd]?", words[0]):
                words.pop(0)
    return " ".join(words) if words != command.split() else command.strip()


_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


def deny_forms(part: str) -> list[str]:
    """A part as written, without wrappers, and without leading VAR=value assignments (deny sees all)."""
    forms = [part.strip(), strip_wrappers(part)]
    words = part.split()
    while words and _ENV_ASSIGNMENT.match(words[0]):
        words.pop(0)
    if words:
        bare = " ".join(words)
        forms.extend([bare, strip_wrappers(bare)])
    return list(dict.fromkeys(forms))


def _command_part_allowed(pattern: str, part: str) -> bool:
    if _has_substitution(part):
        return False
    return command_pattern_matches(pattern, part) or command_pattern_matches(pattern, strip_wrappers(part))


def part_allowed_by(pattern: str, part: str) -> bool:
    """Whether an allow rule's Bash content covers one simple command."""
    return _command_part_allowed(pattern, part)
