"""A tool result as the ``tool_response`` of a PostToolUse hook, in the shape Claude Code gives each built-in tool.

Hooks written for Claude Code read fields such as Bash's ``stdout`` or Edit's
``filePath``; catui's tools keep their own structured data (snake_case, what
catui's own front ends use), so the hook input is translated here. The shapes
were read off Claude Code 2.1.92's ``tool_use_result`` (the same object its
hooks get) for each tool; a tool not listed passes its data unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Shape = Callable[[Mapping[str, Any], Mapping[str, Any], str], Any]


def claude_tool_response(tool_name: str, tool_input: Mapping[str, Any], data: Any, text: str) -> Any:
    """The ``tool_response`` for a successful call of ``tool_name`` (``data``: the tool's structured result,
    ``text``: its result as the model reads it)."""
    shape = SHAPES.get(tool_name)
    if shape is None or not isinstance(data, Mapping):
        return data if data is not None else text
    return shape(data, tool_input, text)


def _bash(data: Mapping[str, Any], tool_input: Mapping[str, Any], text: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stdout": data.get("stdout", "" if "background_task_id" in data else text),
        "stderr": data.get("stderr", ""),
        "interrupted": bool(data.get("interrupted", False)),
        "isImage": False,
        "noOutputExpected": False,
    }
    if "background_task_id" in data:
        out["backgroundTaskId"] = data["background_task_id"]
    return out


def _read(data: Mapping[str, Any], tool_input: Mapping[str, Any], text: str) -> dict[str, Any]:
    kind = data.get("type", "text")
    file: dict[str, Any] = {"filePath": data.get("file_path", tool_input.get("file_path"))}
    if kind == "text":
        file.update({"content": data.get("content", ""), "numLines": data.get("num_lines", 0),
                     "startLine": data.get("start_line", 1), "totalLines": data.get("total_lines", 0)})
    return {"type": kind, "file": file}


def _write(data: Mapping[str, Any], tool_input: Mapping[str, Any], text: str) -> dict[str, Any]:
    original = data.get("original_file")
    content = str(tool_input.get("content", ""))
    return {"type": data.get("type", "create"), "filePath": data.get("file_path", tool_input.get("file_path")),
            "content": content,
            "structuredPatch": structured_patch(original, content) if isinstance(original, str) else [],
            "originalFile": original}


def _edit(data: Mapping[str, Any], tool_input: Mapping[str, Any], text: str) -> dict[str, Any]:
    original, updated = data.get("original_file"), data.get("updated_file")
    patch = structured_patch(original, updated) if isinstance(original, str) and isinstance(updated, str) else []
    return {"filePath": data.get("file_path", tool_input.get("file_path")),
            "oldString": tool_input.get("old_string", ""), "newString": tool_input.get("new_string", ""),
            "originalFile": original, "structuredPatch": patch, "userModified": False,
            "replaceAll": bool(tool_input.get("replace_all", False))}


def _glob(data: Mapping[str, Any], tool_input: Mapping[str, Any], text: str) -> dict[str, Any]:
    return {"filenames": list(data.get("filenames", [])), "numFiles": data.get("num_files", 0),
            "truncated": bool(data.get("truncated", False))}


def _grep(data: Mapping[str, Any], tool_input: Mapping[str, Any], text: str) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": data.get("mode", "files_with_matches"),
                           "filenames": list(data.get("filenames", [])), "numFiles": data.get("num_files", 0)}
    if out["mode"] != "files_with_matches":
        out["content"] = text
        out["numLines"] = data.get("shown", 0)
    return out


def _todo_write(data: Mapping[str, Any], tool_input: Mapping[str, Any], text: str) -> dict[str, Any]:
    return {"oldTodos": data.get("old_todos", []), "newTodos": data.get("new_todos", [])}


SHAPES: dict[str, Shape] = {
    "Bash": _bash, "Read": _read, "Write": _write, "Edit": _edit, "Glob": _glob, "Grep": _grep,
    "TodoWrite": _todo_write,
}


def structured_patch(before: str, after: str) -> list[dict[str, Any]]:
    """The hunks between two texts (three lines of context), as Claude Code's ``structuredPatch``."""
    import difflib  # lazy: only an Edit or Write with a PostToolUse hook needs it

    old, new = before.splitlines(), after.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_grouped_opcodes(3):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in old[i1:i2])
                continue
            lines.extend("-" + line for line in old[i1:i2])
            lines.extend("+" + line for line in new[j1:j2])
        first, last = group[0], group[-1]
        hunks.append({"oldStart": first[1] + 1, "oldLines": last[2] - first[1],
                      "newStart": first[3] + 1, "newLines": last[4] - first[3], "lines": lines})
    return hunks
