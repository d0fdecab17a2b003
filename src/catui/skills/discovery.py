"""Finding ``SKILL.md`` files and reading them with the agent loader's rules.

A skill is the file ``SKILL.md`` directly inside a skill folder:
``<skills folder>/<name>/SKILL.md``. Skills folders, lowest precedence first
(a later skill of the same name wins, as agents do):

1. each plugin's ``skills/`` (skill names ``<plugin>:<name>``);
2. the user's ``~/.claude/skills`` then ``~/.catui/skills`` (``paths.user_config_dirs``);
3. for each folder from the project root down to the working directory,
   ``.claude/skills`` then ``.catui/skills``.

The frontmatter is parsed by ``agents.frontmatter.parse_markdown`` (PyYAML,
`` #`` pre-quoting, quote-and-retry), and a file whose YAML fails is reported
as a failed file with the same wording and line numbers as an agent file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.agents.agent_file_io import AgentFileError, read_agent_file
from catui.agents.frontmatter import ParsedMarkdown, parse_markdown
from catui.agents.plugins import MANIFEST_PATH, read_manifest
from catui.agents.problems import AgentWarning, FailedFile
from catui.agents.tool_lists import parse_tool_list
from catui.skills.locations import project_skill_dirs, user_skill_dirs
from catui.skills.model import SKILL_FILE, SkillDefinition, SkillSource


@dataclass
class SkillLoad:
    """Skills found in one or more folders, with the files that failed and the warnings."""

    skills: list[SkillDefinition] = field(default_factory=list)
    failed_files: list[FailedFile] = field(default_factory=list)
    warnings: list[AgentWarning] = field(default_factory=list)

    def extend(self, other: SkillLoad) -> None:
        self.skills.extend(other.skills)
        self.failed_files.extend(other.failed_files)
        self.warnings.extend(other.warnings)


def load_skill_folder(folder: Path, source: SkillSource, *, prefix: str = "") -> SkillLoad:
    """Every ``<folder>/<name>/SKILL.md``, in name order. A missing folder gives nothing."""
    load = SkillLoad()
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except FileNotFoundError:
        return load
    except OSError as exc:
        load.warnings.append(AgentWarning(str(folder), f"cannot list this skills folder: {exc.strerror or exc}"))
        return load
    for entry in entries:
        if not entry.is_dir():
            continue
        skill_file = Path(entry.path) / SKILL_FILE
        if not skill_file.is_file():
            continue
        load_skill_file(skill_file, source, name=prefix + entry.name, into=load)
    return load


def read_frontmatter_file(path: Path, into: SkillLoad) -> ParsedMarkdown | None:
    """Read and split one Markdown file with YAML frontmatter (a skill or a custom command).

    A file that cannot be read, or whose frontmatter is not a YAML mapping, goes to ``into.failed_files``
    (None is returned); frontmatter that loaded only after Claude Code's quoting retry adds a warning.
    """
    try:
        text = read_agent_file(path)
    except AgentFileError as exc:
        into.failed_files.append(FailedFile(str(path), str(exc)))
        return None
    parsed = parse_markdown(text)
    if parsed.status == "yaml_error":
        into.failed_files.append(
            FailedFile(str(path), f"the frontmatter is not valid YAML, so Claude Code would ignore it: {parsed.error}")
        )
        return None
    if parsed.not_a_mapping:
        into.failed_files.append(FailedFile(str(path), "the frontmatter is not a YAML mapping of 'key: value' lines"))
        return None
    if parsed.status == "ok_after_quote_retry":
        into.warnings.append(AgentWarning(
            str(path), "the frontmatter is not strict YAML; it loaded after quoting values that contain ': ' or '#'"))
    return parsed


def load_skill_file(path: Path, source: SkillSource, *, name: str, into: SkillLoad) -> None:
    """Parse one ``SKILL.md`` and add the skill (or the failure, or warnings) to ``into``."""
    parsed = read_frontmatter_file(path, into)
    if parsed is None:
        return
    data = parsed.frontmatter
    body = parsed.body.strip()
    declared = data.get("name")
    if declared is not None and str(declared).strip() and str(declared).strip() != name.rsplit(":", 1)[-1]:
        into.warnings.append(
            AgentWarning(
                str(path),
                f"frontmatter name '{declared}' differs from the folder name; the skill is called '{name}' "
                "(rename the folder or the name to make them agree)",
            )
        )
    description = text_field(data, "description") or _first_line(body)
    if not description:
        into.failed_files.append(
            FailedFile(str(path), "no description: add 'description: <when to use this skill>' to the frontmatter")
        )
        return
    tools = parse_tool_list(data.get("allowed-tools")) if data.get("allowed-tools") is not None else []
    into.skills.append(
        SkillDefinition(
            name=name,
            description=description,
            body=body,
            base_dir=str(path.parent),
            path=str(path),
            source=source,
            allowed_tools=tuple(tools or ()),
            argument_hint=text_field(data, "argument-hint"),
            model=text_field(data, "model"),
            disable_model_invocation=data.get("disable-model-invocation") is True,
            when_to_use=text_field(data, "when_to_use"),
        )
    )


def load_plugin_skills(plugin_dirs: Sequence[str], cwd: Path) -> SkillLoad:
    """The ``skills/`` folder of each plugin, skills named ``<plugin>:<name>`` (plugin name from its manifest)."""
    load = SkillLoad()
    for root, plugin_name in plugin_roots(plugin_dirs, cwd):
        load.extend(load_skill_folder(root / "skills", "plugin", prefix=f"{plugin_name}:"))
    return load


def plugin_roots(plugin_dirs: Sequence[str], cwd: Path) -> list[tuple[Path, str]]:
    """Each plugin folder with a manifest, once, with its name (the manifest's ``name``, else the folder's)."""
    roots: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for raw in plugin_dirs:
        root = Path(raw).expanduser()
        if not root.is_absolute():
            root = cwd / root
        key = root.resolve()
        if key in seen or not (root / MANIFEST_PATH).is_file():
            continue  # the agent loader already reports a plugin folder without a manifest
        seen.add(key)
        manifest, _error = read_manifest(root)
        declared = (manifest or {}).get("name")
        roots.append((root, declared.strip() if isinstance(declared, str) and declared.strip() else root.name))
    return roots


def discover_skills(
    cwd: Path,
    *,
    home: Path | None = None,
    plugin_dirs: Iterable[str] = (),
    include_user: bool = True,
    include_project: bool = True,
) -> SkillLoad:
    """All skills from every source, lowest precedence first (see the module docstring)."""
    load = load_plugin_skills(list(plugin_dirs), cwd)
    folders: list[tuple[Path, SkillSource]] = []
    if include_user:
        folders.extend((d, "userSettings") for d in user_skill_dirs(home))
    if include_project:
        user_resolved = {d.resolve() for d, _ in folders}
        folders.extend((d, "projectSettings") for d in project_skill_dirs(cwd) if d.resolve() not in user_resolved)
    for folder, source in folders:
        load.extend(load_skill_folder(folder, source))
    return load


def text_field(data: dict[str, Any], key: str) -> str | None:
    """A frontmatter value as stripped text; None when absent, empty or not a scalar."""
    value = data.get(key)
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def _first_line(body: str) -> str | None:
    """A skill without a description is described by its body's first non-empty line (a heading's text)."""
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return None
