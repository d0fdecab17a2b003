"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook, keeping it valid nbformat."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any, ClassVar

from catui.permissions.context import PermissionRequest
from catui.tools.base import Tool, ToolContext, ToolResult
from catui.tools.files import (
    absolute_path_error,
    file_permission_request,
    freshness_error,
    missing_file_error,
    record_read,
    resolve_once,
)
from catui.tools.nofollow import read_resolved, write_resolved
from catui.tools.protected_config import isolated_config_refusal

DESCRIPTION = """\
Change one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell, or delete it.

- notebook_path must be an absolute path, and the notebook must have been read with Read first.
- cell_id names the cell: its id from the notebook, or `cell-N` for the N-th cell counting from 0.
- edit_mode "replace" (default) sets the cell's source (and its type, when cell_type is given); a replaced \
code cell loses its outputs. "insert" adds a new cell after cell_id (at the start when cell_id is omitted) \
and needs cell_type. "delete" removes the cell.
- The notebook stays valid nbformat JSON."""


class NotebookEditTool(Tool):
    name = "NotebookEdit"
    input_model_ref: ClassVar[str] = "catui.tools.notebook_edit_input:NotebookEditInput"

    @property
    def description(self) -> str:
        return DESCRIPTION

    def permission_request(self, args: Any, ctx: ToolContext) -> PermissionRequest:
        return file_permission_request(
            self.name, args, args.notebook_path, ctx, is_edit=True, read_only=False
        )

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.notebook_edit_input import NotebookEditInput
        assert isinstance(args, NotebookEditInput)
        error = absolute_path_error(args.notebook_path, ctx, field="notebook_path")
        if error:
            return ToolResult(error, is_error=True)
        path = resolve_once(args, args.notebook_path, ctx)
        if path.suffix != ".ipynb":
            return ToolResult(f"{path} is not a notebook (.ipynb); use Edit for other files.", is_error=True)
        refusal = isolated_config_refusal(path, ctx, verb="edit")
        if refusal:
            return ToolResult(refusal, is_error=True)
        if not path.exists():
            return ToolResult(missing_file_error(path, ctx.cwd), is_error=True)
        error = freshness_error(path, ctx, verb="edit")
        if error:
            return ToolResult(error, is_error=True)
        try:
            notebook = json.loads(read_resolved(path).decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return ToolResult(f"{path} is not a readable notebook: {exc}.", is_error=True)
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if not isinstance(cells, list):
            return ToolResult(f"{path} has no cells list; it is not an nbformat 4 notebook.", is_error=True)

        mode = args.edit_mode or "replace"
        index = None
        if args.cell_id is not None:
            index = _find_cell(cells, args.cell_id)
            if index is None:
                ids = [str(c.get("id", f"cell-{i}")) for i, c in enumerate(cells)]
                return ToolResult(
                    f"No cell {args.cell_id!r} in {path}. Cells: {', '.join(ids) or 'none'}.", is_error=True
                )
        elif mode != "insert":
            return ToolResult(f"cell_id is required to {mode} a cell.", is_error=True)

        if mode == "delete":
            assert index is not None
            removed = cells.pop(index)
            message = f"Deleted cell {args.cell_id} ({removed.get('cell_type', 'cell')})."
            new_id = args.cell_id
        elif mode == "insert":
            if args.cell_type is None:
                return ToolResult("cell_type (code or markdown) is required to insert a cell.", is_error=True)
            cell = _new_cell(args.cell_type, args.new_source, notebook)
            position = 0 if index is None else index + 1
            cells.insert(position, cell)
            new_id = cell.get("id", f"cell-{position}")
            message = f"Inserted a {args.cell_type} cell {new_id} at position {position}."
        else:
            assert index is not None
            cell = cells[index]
            _set_type(cell, args.cell_type or cell.get("cell_type", "code"))
            cell["source"] = _source_lines(args.new_source)
            if cell["cell_type"] == "code":
                cell["outputs"] = []
                cell["execution_count"] = None
            new_id = args.cell_id
            message = f"Replaced the source of cell {args.cell_id}."
        try:
            write_resolved(path, (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
        except OSError as exc:
            return ToolResult(f"Cannot write {path}: {exc.strerror or exc}.", is_error=True)
        record_read(path, ctx)
        return ToolResult(message, data={"notebook_path": str(path), "cell_id": new_id, "edit_mode": mode})


def _find_cell(cells: list[Any], cell_id: str) -> int | None:
    for i, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("id") == cell_id:
            return i
    match = re.fullmatch(r"cell-(\d+)", cell_id) or re.fullmatch(r"(\d+)", cell_id)
    if match and int(match.group(1)) < len(cells):
        return int(match.group(1))
    return None


def _source_lines(source: str) -> list[str]:
    return source.splitlines(keepends=True)


def _new_cell(cell_type: str, source: str, notebook: dict[str, Any]) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": _source_lines(source)}
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    # Cell ids exist from nbformat 4.5 on; older notebooks must not get them.
    if (notebook.get("nbformat", 4), notebook.get("nbformat_minor", 0)) >= (4, 5):
        cell["id"] = secrets.token_hex(4)
    return cell


def _set_type(cell: dict[str, Any], cell_type: str) -> None:
    if cell.get("cell_type") == cell_type:
        return
    cell["cell_type"] = cell_type
    if cell_type == "markdown":
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    else:
        cell["outputs"] = []
        cell["execution_count"] = None
