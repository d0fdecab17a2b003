"""Agent definitions from Markdown files (``.catui/agents/*.md``, ``.claude/agents/*.md``).

``load_markdown_agent`` applies Claude Code's standalone loader rules: the
frontmatter ``name`` is the agent type, ``description`` is required, the
trimmed body is the system prompt. Where Claude Code drops a file silently
(broken YAML, no description), catui returns the reason so it can be shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.agents.definition import AgentDefinition, AgentSource, agent_name_problem
from catui.agents.fields import coerce_fields, extra_fields
from catui.agents.frontmatter import BOM, ParsedMarkdown, parse_markdown
from catui.agents.problems import AgentWarning
from catui.errors import ConfigurationError

MAX_AGENT_FILE_BYTES = 1024 * 1024
_NOT_BLANK_RE = re.compile("[^\ufeff \t\r\n]")


def _clean_body(body: str) -> str:
    """The system prompt: the body, trimmed, with Windows line endings made plain."""
    body = body.strip()
    return body.replace("\r\n", "\n") if "\r" in body else body


class AgentFileError(Exception):
    """A definition file could not be read; the message says why and what to do."""


@dataclass
class MarkdownLoadResult:
    """The outcome for one file: a definition, or an error, or neither (not an agent file)."""

    definition: AgentDefinition | None = None
    error: str | None = None
    warnings: list[AgentWarning] = field(default_factory=list)
    # True for Markdown that is not an agent at all (no frontmatter): a README next to the agents.
    not_an_agent: bool = False


def read_agent_file(path: str | Path, *, size_hint: int | None = None) -> str:
    """The file's text (UTF-8, BOM kept for the parser to handle). Raises AgentFileError."""
    try:
        size = size_hint if size_hint is not None else os.stat(path).st_size
        if size > MAX_AGENT_FILE_BYTES:
            raise AgentFileError(
                f"file is {size:,} bytes; agent definitions are limited to {MAX_AGENT_FILE_BYTES:,} bytes"
            )
        with open(path, "rb") as handle:
            # read() sizes its buffer from the file; read(MAX + 1) would allocate a 1 MiB buffer per file.
            data = handle.read()
    except IsADirectoryError:
        raise AgentFileError("is a directory, not a Markdown file") from None
    except FileNotFoundError:
        raise AgentFileError("file not found (a broken symbolic link?)") from None
    except PermissionError:
        raise AgentFileError("permission denied; make the file readable") from None
    except OSError as exc:
        raise AgentFileError(f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > MAX_AGENT_FILE_BYTES:
        raise AgentFileError(
            f"file is larger than {MAX_AGENT_FILE_BYTES:,} bytes, the limit for agent definitions"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentFileError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save the file as UTF-8"
        ) from None


def _yaml_failure(parsed: ParsedMarkdown) -> str:
    return (
        f"the frontmatter is not valid YAML ({parsed.error}); quote values that contain ': ' or '#', "
        'e.g. description: "..."'
    )


def load_markdown_agent(
    text: str,
    *,
    path: str,
    source: AgentSource,
    base_dir: str = "",
) -> MarkdownLoadResult:
    """One standalone agent file (Claude Code's ``parseAgentFromMarkdown``)."""
    result = MarkdownLoadResult()

    def warn(message: str) -> None:
        result.warnings.append(AgentWarning(path, message))

    if _NOT_BLANK_RE.search(text) is None:
        result.error = (
            "the file is empty; an agent file starts with a '---' frontmatter block (name, description)"
        )
        return result
    parsed = parse_markdown(text)
    if parsed.status == "no_frontmatter":
        result.not_an_agent = True
        result.warnings.append(
            AgentWarning(path, "not an agent definition (no '---' frontmatter block at the top); ignored")
        )
        return result
    if text.startswith(BOM):
        warn("starts with a UTF-8 byte-order mark; catui ignores it (Claude Code would skip this file)")
    if parsed.status == "yaml_error":
        result.error = _yaml_failure(parsed)
        return result
    data = parsed.frontmatter
    if parsed.not_a_mapping:
        result.error = "the frontmatter is not a YAML mapping of 'key: value' lines"
        return result
    if parsed.status == "ok_after_quote_retry":
        warn("the frontmatter is not strict YAML; it loaded after quoting values that contain ': ' or '#'")

    name = data.get("name")
    if "name" not in data or name is None or name == "":
        result.error = (
            "missing required field 'name' in the frontmatter (the agent type, e.g. name: code-reviewer)"
        )
        return result
    problem = agent_name_problem(name)
    if problem:
        result.error = f"field 'name' {problem}"
        return result
    description = data.get("description")
    if not isinstance(description, str) or not description:
        if description is None:
            result.error = (
                f"missing required field 'description' for agent '{name}' "
                "(one line telling the model when to use the agent)"
            )
        elif description == "":
            result.error = f"field 'description' of agent '{name}' is empty; say when to use the agent"
        else:
            result.error = (
                f"field 'description' of agent '{name}' must be text, not {type(description).__name__}"
            )
        return result

    result.definition = build_definition(
        data,
        agent_type=str(name),
        description=description.replace("\\n", "\n"),
        prompt=_clean_body(parsed.body),
        source=source,
        base_dir=base_dir,
        filename=os.path.splitext(os.path.basename(path))[0],
        warn=warn,
        on_error=lambda message: setattr(result, "error", message),
    )
    return result


def build_definition(
    data: dict[str, Any],
    *,
    agent_type: str,
    description: str,
    prompt: str,
    source: AgentSource,
    base_dir: str,
    filename: str | None,
    warn: Callable[[str], None],
    on_error: Callable[[str], None],
    plugin_name: str | None = None,
) -> AgentDefinition | None:
    """An AgentDefinition from frontmatter-like ``data``; a field error goes to ``on_error``."""
    fields = coerce_fields(data, warn, plugin=source == "plugin")
    fields.update(
        agent_type=agent_type,
        description=description,
        prompt=prompt,
        source=source,
        base_dir=base_dir,
        filename=filename,
        plugin_name=plugin_name,
        extra_fields=extra_fields(data, warn),
    )
    try:
        # coerce_fields has checked and normalised every value; skip pydantic's second pass.
        return AgentDefinition.from_checked_dict(fields)
    except ConfigurationError as exc:
        on_error(str(exc))
        return None
