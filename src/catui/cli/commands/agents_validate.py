"""``catui agents validate``: check agent files, folders, plugins and JSON files; report what loads and what fails."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from catui.agents.known_tools import unknown_tool_names
from catui.agents.problems import AgentWarning, FailedFile
from catui.agents.registry import AgentRegistry
from catui.agents.scan import scan_markdown_files
from catui.skills.model import SKILL_FILE


class ValidationReport:
    """What ``validate`` found: loaded agents (origin, name), failures, warnings."""

    def __init__(self) -> None:
        self.ok: list[tuple[str, str]] = []
        self.failed: list[FailedFile] = []
        self.warnings: list[AgentWarning] = []
        self.notes: list[str] = []

    def render(self) -> str:
        """One line per agent, failure, warning and note, then a summary line."""
        lines: list[str] = []
        for origin, name in self.ok:
            lines.append(f"ok      {name}  ({origin})")
        for item in self.failed:
            lines.append(f"FAILED  {item.path}")
            lines.append(f"        {item.error}")
        for warning in self.warnings:
            lines.append(f"warning {warning}")
        for note in self.notes:
            lines.append(f"note    {note}")
        failed = len(self.failed)
        summary = f"{len(self.ok)} agent{'s' if len(self.ok) != 1 else ''} valid, {failed} failed"
        if self.warnings:
            summary += f", {len(self.warnings)} warning{'s' if len(self.warnings) != 1 else ''}"
        lines.append(summary)
        return "\n".join(lines)


def registry_report(registry: AgentRegistry, notes: Sequence[str] = ()) -> ValidationReport:
    """What ``validate`` with no path reports: every custom agent catui loads, failures, warnings, notes."""
    report = ValidationReport()
    report.ok.extend((registry.origin(agent), agent.agent_type) for agent in registry.all if not agent.is_built_in)
    report.failed.extend(registry.failed_files)
    report.warnings.extend(registry.warnings)
    report.notes.extend(notes)
    return report


def validate_paths(paths: Sequence[Path]) -> ValidationReport:
    """Validate files and folders given on the command line (a folder with a plugin manifest is a plugin)."""
    # lazy: the plugin loader (~16 ms with the Markdown loader) only serves `validate`
    from catui.agents.plugins import MANIFEST_PATH, load_plugin

    report = ValidationReport()
    for path in paths:
        if not path.exists():
            report.failed.append(FailedFile(str(path), "no such file or folder"))
        elif path.is_dir():
            # A folder of several plugins (a marketplace checkout) holds one manifest per plugin: each plugin
            # is validated as a plugin (its name prefix, its field rules), the rest as plain agent files.
            plugin_roots = sorted(m.parent.parent for m in path.rglob(MANIFEST_PATH.as_posix()) if m.is_file())
            for root in plugin_roots:
                plugin = load_plugin(root)
                report.ok.extend((f"{plugin.root} (plugin)", a.agent_type) for a in plugin.agents)
                report.failed.extend(plugin.failed_files)
                report.warnings.extend(plugin.warnings)
            if path in plugin_roots:
                continue
            scan = scan_markdown_files(path)
            report.warnings.extend(scan.warnings)
            for scanned in scan.files:
                file = Path(scanned.path)
                if file.name == SKILL_FILE:
                    continue  # a skill's instructions (catui skills list checks those), not an agent
                if any(file.is_relative_to(root) for root in plugin_roots):
                    continue  # validated with its plugin above
                _validate_file(file, report, explicit=False)
        elif path.suffix == ".json":
            _validate_json_file(path, report)
        else:
            _validate_file(path, report, explicit=True)
    return report


def _validate_file(path: Path, report: ValidationReport, *, explicit: bool) -> None:
    # lazy: the Markdown loader (~15 ms); `catui agents list` loads it only when agent files exist
    from catui.agents.agent_file_io import AgentFileError, read_agent_file
    from catui.agents.markdown import load_markdown_agent

    try:
        text = read_agent_file(path)
    except AgentFileError as exc:
        report.failed.append(FailedFile(str(path), str(exc)))
        return
    result = load_markdown_agent(text, path=str(path), source="projectSettings", base_dir=str(path.parent))
    if result.not_an_agent and explicit:
        report.failed.append(
            FailedFile(
                str(path), "not an agent definition: no '---' frontmatter block at the top of the file"
            )
        )
        return
    report.warnings.extend(result.warnings)
    if result.definition is not None:
        agent = result.definition
        report.ok.append((str(path), agent.agent_type))
        for field_name, entries in (("tools", agent.tools), ("disallowedTools", agent.disallowed_tools)):
            unknown = unknown_tool_names(entries)
            if unknown:
                report.warnings.append(
                    AgentWarning(str(path), f"{field_name} names unknown tools: {', '.join(unknown)} (kept)")
                )
    elif result.error is not None:
        report.failed.append(FailedFile(str(path), result.error))


def _validate_json_file(path: Path, report: ValidationReport) -> None:
    # lazy: only `validate` of a .json file needs the JSON reader (and the Markdown loader under it, ~15 ms)
    from catui.agents.json_agents import agents_from_json_mapping

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        report.failed.append(FailedFile(str(path), f"cannot read the file: {exc}"))
        return
    except json.JSONDecodeError as exc:
        report.failed.append(
            FailedFile(str(path), f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")
        )
        return
    if isinstance(data, dict) and isinstance(data.get("agents"), dict):
        data = data["agents"]
    if not isinstance(data, dict):
        report.failed.append(FailedFile(str(path), 'expected {"name": {"description": ..., "prompt": ...}}'))
        return
    agents, failed, warnings = agents_from_json_mapping(data, source="flagSettings", origin=str(path))
    report.ok.extend((str(path), a.agent_type) for a in agents)
    report.failed.extend(failed)
    report.warnings.extend(warnings)
