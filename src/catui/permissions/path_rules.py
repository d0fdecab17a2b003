"""Path permission rules (``Read(…)``, ``Edit(…)``): gitignore-style patterns against absolute paths,
and whether a path lies inside the working directories."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path


def path_rule_matches(pattern: str, path: Path, base: Path, cwd: Path, *, any_path: bool = True) -> bool:
    """Whether a gitignore-style path pattern matches ``path`` (absolute).

    The path is checked as given and with symlinks resolved: deny and ask
    rules (``any_path``) fire if either form matches, allow rules need both.
    """
    root, body = pattern_root(pattern, base, cwd)
    candidates = _path_forms(path)
    results = [_gitignore_match(body, candidate, root) for candidate in candidates]
    return any(results) if any_path else all(results)


def pattern_root(pattern: str, base: Path, cwd: Path) -> tuple[Path, str]:
    """Split a path pattern into the folder it is anchored at and the gitignore pattern below it."""
    if pattern.startswith("//"):
        return Path("/"), "/" + pattern[2:].lstrip("/")
    if pattern == "~" or pattern.startswith("~/"):
        return Path.home(), "/" + pattern[2:]
    if pattern.startswith("/"):
        return base, pattern
    if pattern.startswith("./"):
        return cwd, "/" + pattern[2:]
    return cwd, pattern


def _path_forms(path: Path) -> list[Path]:
    forms = [Path(os.path.normpath(path))]
    try:
        real = Path(os.path.realpath(path))
    except OSError:
        return forms
    if real != forms[0]:
        forms.append(real)
    return forms


def _gitignore_match(pattern: str, path: Path, root: Path) -> bool:
    roots = [Path(os.path.normpath(root))]
    real_root = Path(os.path.realpath(root))
    if real_root != roots[0]:
        roots.append(real_root)
    for r in roots:
        try:
            rel = path.relative_to(r)
        except ValueError:
            continue
        rel_text = rel.as_posix()
        if rel_text == ".":
            rel_text = ""
        regex = _gitignore_regex(pattern)
        # A pattern that matches a folder matches everything inside it, as in .gitignore.
        segments = rel_text.split("/") if rel_text else []
        for count in range(len(segments), 0, -1):
            if regex.fullmatch("/".join(segments[:count])):
                return True
        if not segments and regex.fullmatch(""):
            return True
    return False


@lru_cache(maxsize=512)
def _gitignore_regex(pattern: str) -> re.Pattern[str]:
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    body = pattern.strip("/") if pattern != "/" else ""
    if body in ("", "**"):
        return re.compile(".*", re.DOTALL)
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("/**", i) and i + 3 == len(body):
            out.append("(?:/.*)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "[":
            end = body.find("]", i + 1)
            if end < 0:
                out.append(re.escape("["))
                i += 1
            else:
                cls = body[i + 1 : end]
                if cls.startswith("!"):
                    cls = "^" + cls[1:]
                out.append("[" + cls.replace("\\", "\\\\") + "]")
                i = end + 1
        elif body[i] == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
        else:
            out.append(re.escape(body[i]))
            i += 1
    regex = "".join(out)
    if not anchored:
        regex = "(?:.*/)?" + regex
    return re.compile(regex, re.DOTALL)


def within_directories(path: Path, directories: tuple[Path, ...] | list[Path]) -> bool:
    """Whether ``path`` (and its symlink-resolved form) lies inside one of ``directories``."""
    forms = {os.path.normpath(path)}
    try:
        forms.add(os.path.realpath(path))
    except OSError:
        pass
    roots: list[str] = []
    for directory in directories:
        roots.append(os.path.normpath(directory))
        try:
            roots.append(os.path.realpath(directory))
        except OSError:
            pass
    return all(any(_is_inside(form, root) for root in roots) for form in forms)


def _is_inside(path: str, root: str) -> bool:
    if path == root:
        return True
    return path.startswith(root.rstrip(os.sep) + os.sep)
