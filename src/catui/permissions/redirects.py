"""The files a shell command writes through output redirection (``> f``, ``>> f``, ``2> f``, ``&> f``).

An allow rule such as ``Bash(npm test:*)`` approves a command, not a place to
write: ``npm test > ~/.bashrc`` matches the rule's prefix but writes outside
the working directories, so the permission check asks about it (as Claude
Code's path checks do).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from catui.permissions.rules import command_parts, within_directories

# Writing to these is never a change to the user's files.
HARMLESS_TARGETS: frozenset[str] = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def output_redirect_targets(command: str) -> list[str]:
    """Every file a redirection in ``command`` writes to, as written (``2>&1``-style duplications excluded)."""
    targets: list[str] = []
    for part in command_parts(command):
        lexer = shlex.shlex(part, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # unbalanced quotes: nothing reliable to report
            continue
        for index, token in enumerate(tokens[:-1]):
            if ">" not in token or token.strip("<>|&") or token.startswith("<<"):
                continue
            target = tokens[index + 1]
            if token.endswith("&") and (target.isdigit() or target == "-"):
                continue  # >&2, 2>&1: a file descriptor, not a file
            targets.append(target)
    return targets


def redirects_outside(command: str, directories: Iterable[Path], cwd: Path) -> list[str]:
    """The redirection targets of ``command`` that lie outside ``directories`` (or cannot be resolved)."""
    dirs = tuple(directories)
    if not dirs:
        return []
    outside: list[str] = []
    for target in output_redirect_targets(command):
        if target in HARMLESS_TARGETS:
            continue
        if "$" in target or "`" in target:
            outside.append(target)  # a variable could point anywhere
            continue
        path = Path(os.path.expanduser(target))
        if not path.is_absolute():
            path = cwd / path
        if not within_directories(Path(os.path.normpath(path)), dirs):
            outside.append(target)
    return outside
