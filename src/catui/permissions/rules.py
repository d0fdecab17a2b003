"""Permission rules in Claude Code's syntax: parsing, and matching a rule against a tool call.

A rule is ``Tool`` (every call of the tool) or ``Tool(content)``:

- ``Bash(npm run test)`` matches that exact command; ``Bash(git status:*)`` and
  ``Bash(git status *)`` match it and anything that starts with it plus a space;
  ``*`` elsewhere is a wildcard (``Bash(git * main)``, ``Bash(ls*)``). A command
  joined with ``&&``, ``;``, ``|`` … is checked part by part: an allow rule must
  cover every part, a deny or ask rule fires on any part.
- ``Read(…)`` / ``Edit(…)`` take gitignore-style globs: ``//abs/path/**`` from the
  filesystem root, ``~/…`` from the home folder, ``/…`` from the rule's base
  folder (the folder holding the settings file's ``.catui``/``.claude`` folder),
  anything else from the current directory. Read rules cover Read, Glob and
  Grep; Edit rules cover Edit, Write, MultiEdit and NotebookEdit.
- ``mcp__server`` and ``mcp__server__*`` match every tool of that MCP server,
  ``mcp__server__tool`` one tool.
- ``WebFetch(domain:example.com)`` matches fetches of that host
  (``domain:*.example.com`` its subdomains).
- ``Agent(Explore)`` matches that agent type; ``Task`` is the old name of ``Agent``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from catui.permissions.model import Behavior, PermissionRequest, PermissionRule

READ_TOOLS: frozenset[str] = frozenset({"Read", "Glob", "Grep", "LS"})
EDIT_TOOLS: frozenset[str] = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

# Old or alternative tool names that rules may still use.
TOOL_NAME_ALIASES: dict[str, str] = {
    "Task": "Agent",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
    "BashOutput": "TaskOutput",
    "AgentOutputTool": "TaskOutput",
    "BashOutputTool": "TaskOutput",
}

_TOOL_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-.]*(?:\*)?$")

# Commands that run another command unchanged; a rule about the inner command applies through them.
_WRAPPERS = ("timeout", "nice", "nohup", "time", "stdbuf")


class RuleSyntaxError(ValueError):
    """A rule string that cannot be parsed; the message says what is wrong and how to write it."""


def canonical_tool_name(name: str) -> str:
    """The tool name a rule or request is compared under (``Task`` → ``Agent``)."""
    return TOOL_NAME_ALIASES.get(name, name)


def parse_rule(
    text: str,
    behavior: Behavior,
    source: str,
    *,
    base: Path | None = None,
    origin: str | None = None,
) -> PermissionRule:
    """Parse one rule string such as ``Bash(git status:*)``.

    ``base`` is the folder ``/…`` path patterns are relative to (None: the
    current directory at match time); ``origin`` names where the text came from
    (a settings file path, ``--allowedTools``) for messages. Raises
    :class:`RuleSyntaxError` for malformed text.
    """
    if not isinstance(text, str):
        raise RuleSyntaxError(f"a permission rule must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise RuleSyntaxError("empty permission rule; write a tool name such as 'Read' or 'Bash(git status:*)'")
    open_at = _first_unescaped(stripped, "(")
    if open_at < 0:
        if _first_unescaped(stripped, ")") >= 0:
            raise RuleSyntaxError(f"'{stripped}' has a ')' without a matching '('")
        tool_name, content = stripped, None
    else:
        tool_name = stripped[:open_at].strip()
        if not stripped.endswith(")") or (stripped.endswith("\\)") and not stripped.endswith("\\\\)")):
            raise RuleSyntaxError(
                f"'{stripped}' has unbalanced parentheses: a rule is 'Tool' or 'Tool(content)' "
                "with the closing ')' last"
            )
        inner = stripped[open_at + 1 : -1]
        _check_balanced(inner, stripped)
        content = _unescape(inner).strip()
    if not tool_name:
        raise RuleSyntaxError(f"'{stripped}' has no tool name before '('; write e.g. 'Bash(npm test:*)'")
    if tool_name.startswith("mcp__"):
        _check_mcp_name(tool_name)
    if not _TOOL_NAME_RE.match(tool_name) or (tool_name.endswith("*") and not tool_name.startswith("mcp__")):
        raise RuleSyntaxError(
            f"'{tool_name}' is not a tool name (letters, digits, '_', '-' and '.' only); "
            "write one rule per entry, e.g. 'Read' and 'Write' as two rules"
        )
    tool_name = canonical_tool_name(tool_name)
    if tool_name.startswith("mcp__"):
        if content is not None and content not in ("", "*"):
            raise RuleSyntaxError(f"'{stripped}': MCP rules take no content; write '{tool_name}' or 'mcp__server__*'")
        content = None
    if content in ("", "*"):
        # Tool() and Tool(*) are the whole tool, as in Claude Code.
        content = None
    if tool_name == "WebFetch" and content is not None and not _is_domain_content(content):
        raise RuleSyntaxError(f"'{stripped}': WebFetch rules name a host as 'WebFetch(domain:example.com)'")
    return PermissionRule(tool_name, content, behavior, source, base=base, origin=origin)


def _is_domain_content(content: str) -> bool:
    return content.startswith("domain:") and bool(content[len("domain:") :].strip())


def _first_unescaped(text: str, char: str) -> int:
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == char:
            return i
    return -1


def _check_balanced(inner: str, whole: str) -> None:
    depth = 0
    escaped = False
    for ch in inner:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise RuleSyntaxError(
                    f"'{whole}' has unbalanced parentheses; escape literal ones in the content as '\\(' and '\\)'"
                )
    if depth:
        raise RuleSyntaxError(
            f"'{whole}' has unbalanced parentheses; escape literal ones in the content as '\\(' and '\\)'"
        )


def _unescape(text: str) -> str:
    return re.sub(r"\\([()\\])", r"\1", text)


def _check_mcp_name(name: str) -> None:
    parts = name.split("__")
    if len(parts) < 2 or not parts[1]:
        raise RuleSyntaxError(f"'{name}' names no MCP server; write 'mcp__<server>' or 'mcp__<server>__<tool>'")
    if len(parts) > 2 and not "__".join(parts[2:]):
        raise RuleSyntaxError(f"'{name}' ends with '__' but names no tool; write 'mcp__{parts[1]}__*' or a tool")
    if "*" in "__".join(parts[1:-1]) or ("*" in parts[-1] and parts[-1] != "*") or (len(parts) == 2 and "*" in parts[1]):
        raise RuleSyntaxError(f"'{name}': in MCP rules '*' may only stand for the whole tool part, as 'mcp__server__*'")


# ---------------------------------------------------------------- matching


def rule_matches(rule: PermissionRule, request: PermissionRequest, cwd: Path | None = None) -> bool:
    """Whether ``rule`` applies to ``request``.

    ``cwd`` is the folder relative path patterns (``src/**``) are taken from,
    and the base of ``/…`` patterns for rules that have none of their own.
    For a Bash command made of several parts, an allow rule matches only if it
    covers every part; a deny or ask rule matches if it covers any part.
    """
    cwd = cwd or Path.cwd()
    tool = canonical_tool_name(request.tool_name)
    if rule.tool_name.startswith("mcp__"):
        return _mcp_rule_matches(rule.tool_name, tool)
    if not _tool_covered(rule.tool_name, tool, rule.content is not None):
        return False
    if rule.content is None:
        return True
    if rule.tool_name in READ_TOOLS or rule.tool_name in EDIT_TOOLS:
        path = request_path(request, cwd)
        if path is None:
            return False
        return path_rule_matches(rule.content, path, rule_base(rule, cwd), cwd, any_path=rule.behavior != "allow")
    if rule.tool_name == "Bash":
        command = request_subject(request)
        if command is None:
            return False
        parts = command_parts(command)
        if rule.behavior == "allow":
            if _is_exact(rule.content) and command.strip() == rule.content.replace("\\*", "*"):
                return True  # the whole command, exactly as approved (compound ones included)
            return bool(parts) and all(_command_part_allowed(rule.content, part) for part in parts)
        return any(command_pattern_matches(rule.content, cand) for part in parts for cand in _deny_forms(part))
    if rule.tool_name == "WebFetch":
        host = request_host(request)
        return host is not None and domain_matches(rule.content, host)
    subject = request_subject(request)
    if subject is None:
        return False
    return wildcard_matches(rule.content, subject)


def _tool_covered(rule_tool: str, request_tool: str, has_content: bool) -> bool:
    if rule_tool == request_tool:
        return True
    # Read rules cover every file-reading tool, Edit rules every file-changing tool.
    if rule_tool == "Read" and request_tool in READ_TOOLS:
        return True
    return rule_tool == "Edit" and request_tool in EDIT_TOOLS


def denies_tool_outright(rule: PermissionRule, tool_name: str) -> bool:
    """Whether ``rule`` is a deny rule for the whole tool (``Bash``, ``mcp__server``), not for some calls of it.

    Such tools are left out of the tool list the model sees, as Claude Code does for ``--disallowedTools Bash``.
    """
    if rule.behavior != "deny" or rule.content is not None:
        return False
    tool = canonical_tool_name(tool_name)
    if rule.tool_name.startswith("mcp__"):
        return _mcp_rule_matches(rule.tool_name, tool)
    return canonical_tool_name(rule.tool_name) == tool


def _mcp_rule_matches(rule_tool: str, request_tool: str) -> bool:
    if not request_tool.startswith("mcp__"):
        return False
    rule_parts = rule_tool.split("__")
    req_parts = request_tool.split("__")
    if len(req_parts) < 3 or rule_parts[1] != req_parts[1]:
        return False
    if len(rule_parts) == 2 or rule_parts[2:] == ["*"]:
        return True
    return rule_tool == request_tool


def rule_base(rule: PermissionRule, cwd: Path) -> Path:
    """The folder a rule's ``/…`` patterns are relative to."""
    return rule.base if rule.base is not None else cwd


def request_subject(request: PermissionRequest) -> str | None:
    """What a rule's content is compared with: the command, the agent type, or the explicit subject."""
    if request.subject is not None:
        return request.subject
    tool = canonical_tool_name(request.tool_name)
    inp = request.tool_input
    if tool == "Bash":
        value = inp.get("command")
    elif tool == "Agent":
        value = inp.get("subagent_type") or "general-purpose"
    elif tool == "WebFetch":
        host = request_host(request)
        value = f"domain:{host}" if host else None
    elif tool == "Skill":
        value = inp.get("skill") or inp.get("command")
    else:
        return None
    return value if isinstance(value, str) else None


def request_host(request: PermissionRequest) -> str | None:
    """The host a WebFetch call reaches, from ``subject`` (``domain:host``) or the ``url`` input."""
    if request.subject and request.subject.startswith("domain:"):
        return request.subject[len("domain:") :].lower()
    url = request.tool_input.get("url")
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.lower() if host else None


def request_path(request: PermissionRequest, cwd: Path) -> Path | None:
    """The absolute path a file tool touches: ``file_path`` or the usual input fields."""
    if request.file_path is not None:
        path = request.file_path
    else:
        raw = None
        for key in ("file_path", "notebook_path", "path"):
            value = request.tool_input.get(key)
            if isinstance(value, str) and value:
                raw = value
                break
        if raw is None:
            if canonical_tool_name(request.tool_name) in ("Glob", "Grep"):
                return Path(os.path.normpath(cwd))
            return None
        path = Path(raw).expanduser()
    if not path.is_absolute():
        path = cwd / path
    return Path(os.path.normpath(path))


def domain_matches(content: str, host: str) -> bool:
    """``domain:example.com`` matches that host; ``domain:*.example.com`` its subdomains."""
    wanted = content[len("domain:") :].strip().lower() if content.startswith("domain:") else content.lower()
    host = host.lower().rstrip(".")
    if wanted.startswith("*."):
        return host.endswith(wanted[1:])
    return host == wanted


# ---------------------------------------------------------------- Bash commands


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


def _is_exact(pattern: str) -> bool:
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


def _deny_forms(part: str) -> list[str]:
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


# ---------------------------------------------------------------- paths


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


def wildcard_matches(pattern: str, value: str) -> bool:
    """Generic rule content matching: exact, or ``*`` as a wildcard."""
    if "*" not in pattern:
        return pattern == value
    regex = ".*".join(re.escape(piece) for piece in pattern.split("*"))
    return re.fullmatch(regex, value, re.DOTALL) is not None


def first_matching(
    rules: Iterable[PermissionRule], behavior: Behavior, request: PermissionRequest, cwd: Path
) -> PermissionRule | None:
    """The first rule of ``behavior`` that matches ``request``."""
    for rule in rules:
        if rule.behavior == behavior and rule_matches(rule, request, cwd):
            return rule
    return None


def format_rule(rule: PermissionRule) -> str:
    """The rule as it is written in settings, with literal parentheses escaped."""
    if rule.content is None:
        return rule.tool_name
    return f"{rule.tool_name}({rule.content.replace('(', chr(92) + '(').replace(')', chr(92) + ')')})"


def rules_of(rules: Sequence[PermissionRule], behavior: Behavior) -> list[PermissionRule]:
    return [r for r in rules if r.behavior == behavior]
