"""A pure-Python file walk with ripgrep's filtering rules, for when the ``rg`` binary is absent.

It mirrors what ``rg --files`` / ``rg PATTERN`` visit: hidden entries and
symlinks are skipped; ``.gitignore`` files apply inside a git repository (the
searched folder's own and those of its ancestors up to the repository root,
plus ``.git/info/exclude``); ``.ignore`` and ``.rgignore`` apply everywhere;
``--glob`` overrides beat every ignore rule, and ``--type`` restricts files to
a type's globs. Glob syntax follows gitignore: a pattern without a slash
matches a name at any depth, ``**`` crosses folders, ``{a,b}`` alternates.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".rgignore")  # later names take precedence in a folder


@lru_cache(maxsize=512)
def glob_to_regex(pattern: str) -> tuple[re.Pattern[str], bool]:
    """Compile a gitignore-style glob; returns the regex and whether the pattern only matches folders.

    The regex matches a ``/``-separated path relative to the folder the
    pattern belongs to.
    """
    dir_only = pattern.endswith("/") and not pattern.endswith("\\/")
    pattern = pattern.rstrip("/") if dir_only else pattern
    anchored = "/" in pattern
    if pattern.startswith("/"):
        pattern = pattern[1:]
    body = _translate(pattern)
    prefix = "" if anchored or pattern.startswith("**/") else "(?:.*/)?"
    return re.compile(prefix + body + r"\Z", re.DOTALL), dir_only


# Left out of searches that include hidden files (as Claude Code's Grep passes them to rg as --glob '!<name>').
VCS_DIRECTORIES: frozenset[str] = frozenset({".git", ".svn", ".hg", ".bzr", ".jj", ".sl"})

def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    brace_depth = 0
    while i < n:
        ch = pattern[i]
        if ch == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                j = i + 2
                if at_start and j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
                if at_start and j == n:
                    out.append(".*")
                    i = j
                    continue
                out.append("[^/]*")
                i = j
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                inner = pattern[i + 1 : end]
                if inner[:1] in ("!", "^"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = end
        elif ch == "{":
            brace_depth += 1
            out.append("(?:")
        elif ch == "}" and brace_depth:
            brace_depth -= 1
            out.append(")")
        elif ch == "," and brace_depth:
            out.append("|")
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class GlobRule:
    """One line of an ignore file, or one ``--glob`` value."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return self.regex.match(rel_path) is not None


def parse_rule(line: str) -> GlobRule | None:
    """Parse one gitignore line; blank lines and comments give None."""
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    negated = stripped.startswith("!")
    if negated or stripped.startswith("\\!") or stripped.startswith("\\#"):
        stripped = stripped[1:]
    if not stripped:
        return None
    regex, dir_only = glob_to_regex(stripped)
    return GlobRule(regex, negated, dir_only)


def read_rules(path: Path) -> list[GlobRule]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [rule for rule in (parse_rule(line) for line in text.splitlines()) if rule is not None]


def last_match(rules: Sequence[GlobRule], rel_path: str, is_dir: bool) -> bool | None:
    """True = ignored, False = re-included (``!``), None = no rule matched. The last matching rule wins."""
    for rule in reversed(rules):
        if rule.matches(rel_path, is_dir):
            return not rule.negated
    return None


@dataclass
class _IgnoreLayer:
    base: Path
    rules: list[GlobRule]


class Overrides:
    """``--glob`` values: a match decides outright; with any positive glob, unmatched files are skipped."""

    def __init__(self, globs: Sequence[str]) -> None:
        self.rules: list[GlobRule] = []
        for glob in globs:
            negated = glob.startswith("!")
            regex, dir_only = glob_to_regex(glob[1:] if negated else glob)
            # Inverted on purpose: in ripgrep a plain --glob whitelists and a "!" glob ignores.
            self.rules.append(GlobRule(regex, not negated, dir_only))
        self.has_whitelist = any(not glob.startswith("!") for glob in globs)

    def decide(self, rel_path: str, is_dir: bool) -> bool | None:
        """True = include, False = skip, None = let the other rules decide."""
        for rule in reversed(self.rules):
            if rule.matches(rel_path, is_dir):
                return rule.negated  # negated flag holds "whitelisted" here
        if self.has_whitelist and not is_dir:
            return False
        return None


class TypeFilter:
    """``--type NAME``: files must match one of the type's globs (matched against the file name)."""

    def __init__(self, globs: Sequence[str]) -> None:
        self.rules = [glob_to_regex(glob)[0] for glob in globs]

    def matches(self, name: str) -> bool:
        return any(rule.match(name) for rule in self.rules)


def find_git_root(start: Path) -> Path | None:
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _ancestor_layers(root: Path, git_root: Path | None) -> list[_IgnoreLayer]:
    """Ignore files of the folders above ``root`` that ripgrep also honours."""
    layers: list[_IgnoreLayer] = []
    if git_root is not None:
        exclude = read_rules(git_root / ".git" / "info" / "exclude")
        if exclude:
            layers.append(_IgnoreLayer(git_root, exclude))
    for parent in reversed(root.parents):
        layers.extend(_layers_of(parent, in_repo=git_root is not None and parent.is_relative_to(git_root)))
    return layers


def _layers_of(folder: Path, *, in_repo: bool) -> list[_IgnoreLayer]:
    layers = []
    for name in IGNORE_FILE_NAMES:
        if name == ".gitignore" and not in_repo:
            continue
        path = folder / name
        if path.is_file():
            rules = read_rules(path)
            if rules:
                layers.append(_IgnoreLayer(folder, rules))
    return layers


def _ignored(layers: Sequence[_IgnoreLayer], path: Path, is_dir: bool) -> bool | None:
    """The deepest ignore file with a matching rule decides: True ignored, False whitelisted."""
    for layer in reversed(layers):
        rel = path.relative_to(layer.base).as_posix()
        verdict = last_match(layer.rules, rel, is_dir)
        if verdict is not None:
            return verdict
    return None


def walk_files(
    root: Path,
    *,
    globs: Sequence[str] = (),
    type_globs: Sequence[str] | None = None,
    hidden: bool = False,
) -> Iterator[Path]:
    """Yield the files under ``root`` that ``rg --files --glob … --type …`` would list (absolute paths).

    ``hidden`` is ``rg --hidden`` with the version-control folders (:data:`VCS_DIRECTORIES`) excluded.
    """
    root = root.absolute()
    overrides = Overrides(globs) if globs else None
    type_filter = TypeFilter(type_globs) if type_globs is not None else None
    git_root = find_git_root(root)
    base_layers = _ancestor_layers(root, git_root)
    yield from _walk(root, root, base_layers, git_root is not None, overrides, type_filter, hidden)


def _walk(
    folder: Path,
    root: Path,
    layers: list[_IgnoreLayer],
    in_repo: bool,
    overrides: Overrides | None,
    type_filter: TypeFilter | None,
    hidden: bool = False,
) -> Iterator[Path]:
    try:
        in_repo = in_repo or (folder / ".git").exists()
        layers = layers + _layers_of(folder, in_repo=in_repo)
        entries = list(os.scandir(folder))
    except OSError:
        return  # an unreadable folder is skipped, as rg skips it; the rest of the tree is still listed
    for entry in entries:
        if entry.is_symlink():
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        path = Path(entry.path)
        if not _included(path, entry.name, is_dir, root, layers, overrides, type_filter, hidden):
            continue
        if is_dir:
            yield from _walk(path, root, layers, in_repo, overrides, type_filter, hidden)
        elif entry.is_file():
            yield path


def _included(
    path: Path,
    name: str,
    is_dir: bool,
    root: Path,
    layers: Sequence[_IgnoreLayer],
    overrides: Overrides | None,
    type_filter: TypeFilter | None,
    hidden: bool = False,
) -> bool:
    if is_dir and name == ".git":
        return False
    if hidden and name in VCS_DIRECTORIES:
        return False
    if overrides is not None:
        verdict = overrides.decide(path.relative_to(root).as_posix(), is_dir)
        if verdict is not None:
            return verdict
    ignored = _ignored(layers, path, is_dir)
    if ignored:
        return False
    whitelisted = ignored is False
    if type_filter is not None and not is_dir:
        if not type_filter.matches(name):
            return False
        whitelisted = True
    return hidden or whitelisted or not name.startswith(".")
