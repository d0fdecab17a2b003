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

from catui.agents.definition import (
    AGENT_SOURCES,
    AgentDefinition,
    AgentSource,
    agent_name_problem,
    construct_checked,
    fields_are_checked,
)
from catui.agents.fields import KNOWN_KEYS, coerce_fields, extra_fields
from catui.agents.frontmatter import BOM, ParsedMarkdown, parse_markdown
from catui.agents.problems import AgentWarning
from catui.errors import ConfigurationError

MAX_AGENT_FILE_BYTES = 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NOT_BLANK_RE = re.compile("[^\ufeff \t\r\n]")


_WHITESPACE_RUN_RE = re.compile(r"\s*")  # \s on str is str.isspace(), what str.strip() removes


def _prompt_from(text: str, start: int) -> str:
    """The system prompt: ``text[start:]`` trimmed, with Windows line endings made plain.

    One copy of the text instead of two (slice, then strip): bodies are most of a file.
    """
    start = _WHITESPACE_RUN_RE.match(text, start).end()  # type: ignore[union-attr]  # \s* always matches
    end = len(text)
    while end > start and text[end - 1].isspace():
        end -= 1
        if len(text) - end > 64:  # a long run of trailing white space: let strip() find its start
            end = start + len(text[start:end].rstrip())
            break
    prompt = text[start:end]
    return prompt.replace("\r\n", "\n") if "\r" in prompt else prompt


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
        # One read of the known size plus a byte (to notice a file that grew since its stat), on a raw
        # descriptor: a Python file object costs more than the read itself for a small file.
        descriptor = os.open(path, _OPEN_FLAGS)
        try:
            data = os.read(descriptor, size + 1)
            if len(data) != size:  # grew or shrank since the stat (or a short read): read to the end
                chunks = [data]
                while chunk := os.read(descriptor, 65536):
                    chunks.append(chunk)
                    if sum(map(len, chunks)) > MAX_AGENT_FILE_BYTES:
                        break
                data = b"".join(chunks)
        finally:
            os.close(descriptor)
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
    warnings = result.warnings

    def warn(message: str) -> None:
        warnings.append(AgentWarning(path, message))

    parsed = parse_markdown(text, with_body=False)
    status = parsed.status
    if status == "no_frontmatter":
        # An empty file has no frontmatter either; checked only here, off the common path.
        if _NOT_BLANK_RE.search(text) is None:
            result.error = (
                "the file is empty; an agent file starts with a '---' frontmatter block (name, description)"
            )
            return result
        result.not_an_agent = True
        warn("not an agent definition (no '---' frontmatter block at the top); ignored")
        return result
    if text[:1] == BOM:
        warn("starts with a UTF-8 byte-order mark; catui ignores it (Claude Code would skip this file)")
    if status == "yaml_error":
        result.error = _yaml_failure(parsed)
        return result
    data = parsed.frontmatter
    if parsed.not_a_mapping:
        result.error = "the frontmatter is not a YAML mapping of 'key: value' lines"
        return result
    if status == "ok_after_quote_retry":
        warn("the frontmatter is not strict YAML; it loaded after quoting values that contain ': ' or '#'")

    name = data.get("name")
    if name is None or name == "":
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

    # The file name without folder and extension ("reviewer" for ".../reviewer.md").
    filename = path[path.rfind(os.sep) + 1 :] if os.altsep is None else os.path.basename(path)
    dot = filename.rfind(".")
    if dot > 0 and filename[:dot].lstrip("."):  # os.path.splitext's rule: leading dots are not a suffix
        filename = filename[:dot]
    result.definition = build_definition(
        data,
        agent_type=name,
        description=description.replace("\\n", "\n") if "\\n" in description else description,
        prompt=_prompt_from(text, parsed.body_start),
        source=source,
        base_dir=base_dir,
        filename=filename,
        warn=warn,
        on_error=lambda message: setattr(result, "error", message),
        name_checked=True,
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
    name_checked: bool = False,
) -> AgentDefinition | None:
    """An AgentDefinition from frontmatter-like ``data``; a field error goes to ``on_error``.

    ``name_checked`` says the caller already ran ``agent_name_problem`` on ``agent_type``.
    """
    fields = coerce_fields(data, warn, plugin=source == "plugin")
    # Only coerce_fields' values need the strict check: the ones added below are built right here.
    checked = fields_are_checked(fields)
    extras = extra_fields(data, warn) if not KNOWN_KEYS.issuperset(data) else {}
    fields.update(
        agent_type=agent_type,
        description=description,
        prompt=prompt,
        source=source,
        base_dir=base_dir,
        filename=filename,
        plugin_name=plugin_name,
        extra_fields=extras,
    )
    if (
        checked
        and type(agent_type) is str
        and (name_checked or agent_name_problem(agent_type) is None)
        and type(description) is str
        and type(prompt) is str
        and type(base_dir) is str
        and (filename is None or type(filename) is str)
        and (plugin_name is None or type(plugin_name) is str)
        and source in AGENT_SOURCES
    ):
        return construct_checked(fields)
    try:
        # coerce_fields has checked and normalised every value; skip pydantic's second pass.
        return AgentDefinition.from_checked_dict(fields)
    except ConfigurationError as exc:
        on_error(str(exc))
        return None
