"""Read, Write, Edit and NotebookEdit against real files in a temp dir."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from catui.messages import result_text
from catui.tools.base import ToolContext, ToolResult
from catui.tools.edit import EditTool
from catui.tools.edit_input import EditInput
from catui.tools.notebook_edit import NotebookEditTool
from catui.tools.notebook_edit_input import NotebookEditInput
from catui.tools.read import ReadTool
from catui.tools.read_input import ReadInput
from catui.tools.write import WriteTool
from catui.tools.write_input import WriteInput


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, project_root=tmp_path)


async def read(ctx: ToolContext, path: Path | str, **kw: object) -> ToolResult:
    return await ReadTool().call(ReadInput.model_validate({"file_path": str(path), **kw}), ctx)


async def edit(ctx: ToolContext, path: Path, old: str, new: str, replace_all: bool = False) -> ToolResult:
    args = EditInput(file_path=str(path), old_string=old, new_string=new, replace_all=replace_all)
    return await EditTool().call(args, ctx)


def text(result: ToolResult) -> str:
    return result_text(result.content)


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


# ------------------------------------------------------------------ Read


async def test_read_numbers_lines_and_records_mtime(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("alpha\nbeta\n")
    result = await read(ctx, f)
    assert not result.is_error
    assert text(result) == "     1\talpha\n     2\tbeta"
    assert ctx.read_state[str(f)] == f.stat().st_mtime


async def test_read_offset_limit_and_default_cap(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "long.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 2501)))
    result = await read(ctx, f)
    body = text(result)
    assert body.count("\n") >= 2000 and "  2000\tline 2000" in body and "line 2001" not in body
    assert "offset=2001" in body
    part = text(await read(ctx, f, offset=10, limit=2))
    assert (
        part
        == "    10\tline 10\n    11\tline 11\n\n(Showing lines 10-11 of 2500. To read further, call Read again with offset=12 and a limit.)"
    )
    past = await read(ctx, f, offset=3000)
    assert "only 2500 lines" in text(past)


async def test_read_cuts_long_lines(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "wide.txt"
    f.write_text("x" * 5000 + "\n")
    body = text(await read(ctx, f))
    assert "x" * 2000 + "… [line truncated]" in body and "x" * 2001 not in body


async def test_read_refusals(ctx: ToolContext, tmp_path: Path) -> None:
    relative = await read(ctx, "a.txt")
    assert (
        relative.is_error and "absolute path" in text(relative) and str(tmp_path / "a.txt") in text(relative)
    )

    folder = await read(ctx, tmp_path)
    assert folder.is_error and "directory" in text(folder) and "Glob" in text(folder)

    (tmp_path / "config.yaml").write_text("x: 1\n")
    missing = await read(ctx, tmp_path / "config.yml")
    assert missing.is_error and "does not exist" in text(missing) and "config.yaml" in text(missing)

    (tmp_path / "blob.dat2").write_bytes(b"abc\x00def" * 10)
    binary = await read(ctx, tmp_path / "blob.dat2")
    assert binary.is_error and "binary" in text(binary)
    assert str(tmp_path / "blob.dat2") not in ctx.read_state


async def test_read_empty_file_and_image(ctx: ToolContext, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = await read(ctx, empty)
    assert not result.is_error and "empty" in text(result)

    png = tmp_path / "dot.png"
    data = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
    png.write_bytes(data)
    image = await read(ctx, png)
    assert isinstance(image.content, list)
    block = image.content[0]
    assert block["type"] == "image" and block["source"]["media_type"] == "image/png"
    assert base64.b64decode(block["source"]["data"]) == data


async def test_read_permission_request_resolves_dots_and_symlinks(ctx: ToolContext, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "f.txt").write_text("x")
    (tmp_path / "link").symlink_to(real)
    request = ReadTool().permission_request(
        ReadInput(file_path=str(tmp_path / "link" / ".." / "link" / "f.txt")), ctx
    )
    assert request.file_path == (real / "f.txt").resolve()
    assert request.is_edit is False and request.read_only is True


# ------------------------------------------------------------------ Write


async def test_write_creates_parents_and_refuses_unread_overwrite(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "new" / "deep" / "f.txt"
    created = await WriteTool().call(WriteInput(file_path=str(target), content="hi\n"), ctx)
    assert not created.is_error and target.read_text() == "hi\n"
    assert created.data["type"] == "create"

    other = tmp_path / "existing.txt"
    other.write_text("keep me")
    refused = await WriteTool().call(WriteInput(file_path=str(other), content="lost"), ctx)
    assert refused.is_error and "has not been read" in text(refused)
    assert other.read_text() == "keep me"

    await read(ctx, other)
    ok = await WriteTool().call(WriteInput(file_path=str(other), content="replaced"), ctx)
    assert not ok.is_error and other.read_text() == "replaced" and ok.data["type"] == "update"
    # Our own write updated read_state, so a second write is allowed.
    again = await WriteTool().call(WriteInput(file_path=str(other), content="again"), ctx)
    assert not again.is_error


async def test_write_refuses_file_changed_since_read(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("v1")
    await read(ctx, f)
    f.write_text("v2 by someone else")
    bump_mtime(f)
    refused = await WriteTool().call(WriteInput(file_path=str(f), content="v3"), ctx)
    assert refused.is_error and "modified since it was read" in text(refused)
    assert f.read_text() == "v2 by someone else"


async def test_write_permission_request_marks_edit(ctx: ToolContext, tmp_path: Path) -> None:
    request = WriteTool().permission_request(
        WriteInput(file_path=str(tmp_path / "a" / ".." / "b.txt"), content=""), ctx
    )
    assert request.file_path == (tmp_path / "b.txt").resolve() and request.is_edit


# ------------------------------------------------------------------ Edit


async def test_edit_replaces_unique_match_and_shows_snippet(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "code.py"
    f.write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    await read(ctx, f)
    result = await edit(ctx, f, "return 1", "return 42")
    assert not result.is_error
    assert f.read_text() == "def f():\n    return 42\n\n\ndef g():\n    return 2\n"
    assert "     2\t    return 42" in text(result)


async def test_edit_refusals(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "dup.txt"
    f.write_text("x = 1\nx = 1\nx = 1\n")
    not_read = await edit(ctx, f, "x = 1", "x = 2")
    assert not_read.is_error and "has not been read" in text(not_read)
    await read(ctx, f)
    many = await edit(ctx, f, "x = 1", "x = 2")
    assert many.is_error and "3 times" in text(many) and "replace_all" in text(many)
    missing = await edit(ctx, f, "y = 1", "y = 2")
    assert missing.is_error and "not found" in text(missing)
    same = await edit(ctx, f, "x = 1", "x = 1")
    assert same.is_error and "identical" in text(same)
    assert f.read_text() == "x = 1\nx = 1\nx = 1\n"

    all_of_them = await edit(ctx, f, "x = 1", "x = 2", replace_all=True)
    assert not all_of_them.is_error and f.read_text() == "x = 2\nx = 2\nx = 2\n"
    assert all_of_them.data["replacements"] == 3

    f.write_text("changed outside\n")
    bump_mtime(f)
    stale = await edit(ctx, f, "changed", "edited")
    assert stale.is_error and "modified since it was read" in text(stale)

    nowhere = await edit(ctx, tmp_path / "nope.txt", "a", "b")
    assert nowhere.is_error and "does not exist" in text(nowhere)


async def test_edit_preserves_crlf(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await read(ctx, f)
    result = await edit(ctx, f, "one\ntwo", "uno\ndos\nextra")
    assert not result.is_error
    assert f.read_bytes() == b"uno\r\ndos\r\nextra\r\nthree\r\n"


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [("utf-8-sig", b"\xef\xbb\xbf"), ("utf-16", None), ("latin-1", None)],
)
async def test_edit_preserves_encoding(
    ctx: ToolContext, tmp_path: Path, encoding: str, prefix: bytes | None
) -> None:
    f = tmp_path / f"enc-{encoding}.txt"
    original = "café = 1\nnaïve = 2\n"
    f.write_bytes(original.encode(encoding))
    before = f.read_bytes()
    await read(ctx, f)
    result = await edit(ctx, f, "naïve = 2", "naïve = 3")
    assert not result.is_error, text(result)
    after = f.read_bytes()
    assert after.decode(encoding) == "café = 1\nnaïve = 3\n"
    assert after[:2] == before[:2]  # same BOM (or same first bytes)
    if prefix:
        assert after.startswith(prefix) and not after[len(prefix) :].startswith(prefix)


async def test_edit_empty_old_string_creates_file(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "fresh" / "new.txt"
    result = await edit(ctx, f, "", "content\n")
    assert not result.is_error and f.read_text() == "content\n"


# ------------------------------------------------------------------ NotebookEdit


def make_notebook(path: Path) -> None:
    nb = {
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n"]},
            {
                "cell_type": "code",
                "id": "calc",
                "metadata": {},
                "source": ["1 + 1"],
                "execution_count": 3,
                "outputs": [
                    {
                        "output_type": "execute_result",
                        "data": {"text/plain": ["2"]},
                        "metadata": {},
                        "execution_count": 3,
                    }
                ],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb))


async def nb_edit(ctx: ToolContext, path: Path, **kw: object) -> ToolResult:
    return await NotebookEditTool().call(
        NotebookEditInput.model_validate({"notebook_path": str(path), **kw}), ctx
    )


async def test_notebook_replace_insert_delete(ctx: ToolContext, tmp_path: Path) -> None:
    nb = tmp_path / "n.ipynb"
    make_notebook(nb)
    unread = await nb_edit(ctx, nb, cell_id="calc", new_source="2 + 2")
    assert unread.is_error and "has not been read" in text(unread)
    await read(ctx, nb)

    replaced = await nb_edit(ctx, nb, cell_id="calc", new_source="2 + 2\nprint(4)")
    assert not replaced.is_error
    cells = json.loads(nb.read_text())["cells"]
    assert cells[1]["source"] == ["2 + 2\n", "print(4)"] and cells[1]["outputs"] == []
    assert cells[1]["execution_count"] is None

    inserted = await nb_edit(
        ctx, nb, cell_id="intro", new_source="x = 1", cell_type="code", edit_mode="insert"
    )
    assert not inserted.is_error
    cells = json.loads(nb.read_text())["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "code", "code"]
    assert cells[1]["source"] == ["x = 1"] and "id" in cells[1] and cells[1]["outputs"] == []

    no_type = await nb_edit(ctx, nb, new_source="y", edit_mode="insert")
    assert no_type.is_error and "cell_type" in text(no_type)

    deleted = await nb_edit(ctx, nb, cell_id="cell-0", new_source="", edit_mode="delete")
    assert not deleted.is_error
    doc = json.loads(nb.read_text())
    assert [c.get("id") for c in doc["cells"]][1:] == ["calc"] and doc["nbformat"] == 4

    unknown = await nb_edit(ctx, nb, cell_id="zzz", new_source="")
    assert unknown.is_error and "calc" in text(unknown)


async def test_read_caps_total_characters_of_wide_files(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "wide-many.txt"
    f.write_text(("y" * 1500 + "\n") * 1000)
    body = text(await read(ctx, f))
    assert len(body) < 210_000 and "To read further" in body and "offset=" in body


async def test_edit_mixed_line_endings_left_alone(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "mixed.txt"
    f.write_bytes(b"a\r\nb\r\nc\nd\n")
    await read(ctx, f)
    assert not (await edit(ctx, f, "c\nd", "C\nD")).is_error
    assert f.read_bytes() == b"a\r\nb\r\nC\nD\n"
    assert not (await edit(ctx, f, "a\nb", "A\nB")).is_error
    assert f.read_bytes() == b"A\r\nB\r\nC\nD\n"
