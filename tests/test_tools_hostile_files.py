"""The file and search tools against hostile files, as an attacker would plant them.

FIFOs, devices, symbolic link loops, huge and endless files, non-UTF-8 names,
unreadable folders and catastrophic regexes: each gives a one-line error or a
bounded result, never a hang, a crash or unbounded memory. Memory promises are
checked in a child process under ``RLIMIT_AS``, so a regression fails the test
instead of exhausting the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from catui.messages import result_text
from catui.session.transcript import TranscriptWriter, read_transcript
from catui.tools.base import ToolContext, ToolResult, ToolServices
from catui.tools.glob import GlobTool
from catui.tools.glob_input import GlobInput
from catui.tools.grep import GrepTool
from catui.tools.grep_input import GrepInput
from catui.tools.read import ReadTool
from catui.tools.read_input import ReadInput

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, project_root=tmp_path)


async def read(ctx: ToolContext, path: Path | str, **kw: object) -> ToolResult:
    return await asyncio.wait_for(ReadTool().call(ReadInput.model_validate({"file_path": str(path), **kw}), ctx), 60)


def text(result: ToolResult) -> str:
    return result_text(result.content)


# ------------------------------------------------------------------ Read


async def test_read_of_a_fifo_is_refused_without_blocking(ctx: ToolContext, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    result = await read(ctx, fifo)  # no writer ever comes: a blocking open would hang here
    assert result.is_error and "is a named pipe (FIFO), not a regular file" in text(result)


async def test_read_of_dev_zero_and_a_link_to_it_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    link = tmp_path / "notes.md"
    link.symlink_to("/dev/zero")
    for target in (Path("/dev/zero"), link):
        result = await read(ctx, target)
        assert result.is_error and "is a character device, not a regular file" in text(result)


async def test_read_of_a_symlink_loop_says_so(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    result = await read(ctx, tmp_path / "a")
    assert result.is_error and "is a symbolic link loop" in text(result)
    assert "does not exist" not in text(result) and "Did you mean" not in text(result)


async def test_an_oversized_image_is_refused_by_its_size_before_reading(ctx: ToolContext, tmp_path: Path) -> None:
    image = tmp_path / "big.png"
    with image.open("wb") as out:
        out.truncate(3 * 1024 * 1024 * 1024)  # sparse: 3 GB that cost no disk
    result = await read(ctx, image)
    assert result.is_error and f"is an image of {3 * 1024 ** 3} bytes" in text(result)


async def test_a_huge_text_file_is_read_as_a_window(ctx: ToolContext, tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    line = b"0123456789" * 10 + b"\n"
    with big.open("wb") as out:
        out.write(line * 200_000)  # 20 MB, over the whole-read limit
        out.write(b"x" * (5 * 1024 * 1024) + b"\nafter the long line\n")
    first = await read(ctx, big, limit=3)
    assert not first.is_error and text(first).startswith("     1\t0123456789")
    assert "Showing lines 1-3" in text(first) and "offset=4" in text(first)
    tail = await read(ctx, big, offset=200_001, limit=5)
    lines = text(tail).splitlines()
    assert lines[0].startswith("200001\txxxx") and lines[0].endswith("[line truncated]")
    assert lines[1] == "200002\tafter the long line"


READ_UNDER_CEILING = textwrap.dedent("""
    import asyncio, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (CEILING, CEILING))
    from catui.tools.base import ToolContext
    from catui.tools.read import ReadTool
    from catui.tools.read_input import ReadInput
    path = Path(sys.argv[1])
    ctx = ToolContext(cwd=path.parent, project_root=path.parent)
    result = asyncio.run(ReadTool().call(ReadInput(file_path=str(path), offset=2, limit=2), ctx))
    print("error" if result.is_error else "ok", result.content[:200] if isinstance(result.content, str) else "")
""")


def run_under_ceiling(script: str, *args: str, ceiling: int = 400 * 1024 * 1024) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script.replace("CEILING", str(ceiling)), *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(SRC)})


def test_reading_a_2_gb_file_stays_under_a_memory_ceiling(tmp_path: Path) -> None:
    big = tmp_path / "huge.txt"
    with big.open("wb") as out:
        out.write(b"a line of text\n" * (20 * 1024 * 1024 // 15))  # 20 MB of text: over the whole-read limit
        out.truncate(2 * 1024 * 1024 * 1024)  # then sparse to 2 GB (no disk used)
    done = run_under_ceiling(READ_UNDER_CEILING, str(big))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok") and "     2\ta line of text" in done.stdout


EDIT_UNDER_CEILING = textwrap.dedent("""
    import asyncio, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (CEILING, CEILING))
    from catui.tools.base import ToolContext
    from catui.tools.edit import EditTool
    from catui.tools.edit_input import EditInput
    from catui.tools.files import record_read
    path = Path(sys.argv[1])
    ctx = ToolContext(cwd=path.parent, project_root=path.parent)
    record_read(path, ctx)
    args = EditInput(file_path=str(path), old_string="a", new_string="b" * 4096, replace_all=True)
    result = asyncio.run(EditTool().call(args, ctx))
    print("error" if result.is_error else "ok", result.content)
""")


def test_edit_replace_all_that_would_explode_is_refused_under_a_memory_ceiling(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"a" * (1024 * 1024))  # 1 MB of "a" x 4096 = 4 GB of result
    done = run_under_ceiling(EDIT_UNDER_CEILING, str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("error") and "over the 268435456-character limit for Edit" in done.stdout
    assert target.read_bytes() == b"a" * (1024 * 1024)


# ------------------------------------------------------------------ Glob and Grep


@pytest.fixture
def odd_names(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "plain.txt").write_text("needle\n")
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "wb") as out:  # Latin-1, not UTF-8
        out.write(b"needle in a latin-1 name\n")
    return folder


@pytest.mark.parametrize("fallback", [False, True], ids=["rg", "python"])
async def test_non_utf8_file_names_survive_glob_grep_and_the_transcript(odd_names: Path, tmp_path: Path,
                                                                       fallback: bool) -> None:
    ctx = ToolContext(cwd=odd_names, project_root=odd_names)
    found = await GlobTool(force_fallback=fallback).call(GlobInput(pattern="*.txt"), ctx)
    grepped = await GrepTool(force_fallback=fallback).call(GrepInput(pattern="needle", output_mode="content"), ctx)
    assert not found.is_error and not grepped.is_error
    odd = os.fsdecode(os.path.join(os.fsencode(odd_names), b"caf\xe9.txt"))
    assert odd in text(found) and odd in text(grepped)
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter([path], session_id="s", cwd=tmp_path)
    for result in (found, grepped):  # what killed catui before: the transcript's encode
        writer.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                    "content": text(result)}]})
    restored = read_transcript(path)
    assert restored[0]["content"][0]["content"] == text(found)
    # The name can be used again: the model sends it back, Read opens the same bytes.
    again = await read(ctx, odd)
    assert "latin-1 name" in text(again)


async def test_grep_fallback_with_a_catastrophic_regex_is_stopped_by_its_time_limit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 64 + "!\n")
    services = ToolServices(env={"CATUI_GREP_TIMEOUT_MS": "1500"})
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path, services=services)
    result = await asyncio.wait_for(
        GrepTool(force_fallback=True).call(GrepInput(pattern="(a+)+$", output_mode="content"), ctx), 60)
    assert result.is_error and "the search was stopped after 1.5 seconds" in text(result)
    assert "(a+)+" in text(result) or "nested repetition" in text(result)


async def test_grep_fallback_with_a_catastrophic_regex_is_stopped_by_an_abort(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 64 + "!\n")
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    call = asyncio.ensure_future(GrepTool(force_fallback=True).call(GrepInput(pattern="(a+)+$"), ctx))
    await asyncio.sleep(0.5)
    ctx.abort.set()  # what SIGINT / SIGTERM / TaskStop do; the event loop is free to see it
    result = await asyncio.wait_for(call, 30)
    assert result.is_error and "interrupted" in text(result)


GREP_UNDER_CEILING = textwrap.dedent("""
    import asyncio, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (CEILING, CEILING))
    from catui.tools.base import ToolContext
    from catui.tools.grep import GrepTool
    from catui.tools.grep_input import GrepInput
    root = Path(sys.argv[1])
    ctx = ToolContext(cwd=root, project_root=root)
    result = asyncio.run(GrepTool().call(GrepInput(pattern="x", output_mode="content", head_limit=3), ctx))
    print(result.data, "peak_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
""")


def test_grep_content_mode_reads_rgs_output_with_a_cap(tmp_path: Path) -> None:
    # A long path makes every matching line of a small file a long line of rg output: 64 files of 64 Ki "x"
    # lines under a 240-character path give about 1 GB of output, far over the ceiling if it were read whole.
    # Many files rather than one: rg buffers a file's output whole before writing it, and one 1 GB buffer
    # made rg itself (not catui) slow enough to time the test out now and then.
    root = tmp_path / ("d" * 200)
    root.mkdir()
    for index in range(64):
        (root / f"f{index}.txt").write_bytes(b"x\n" * (64 * 1024))
    # rg inherits the ceiling: it leaves rg room, and catui's own peak (RUSAGE_SELF, rg not counted) must
    # stay far below the gigabyte it would hold unbounded.
    done = run_under_ceiling(GREP_UNDER_CEILING, str(root), ceiling=3 * 1024 * 1024 * 1024)
    assert done.returncode == 0, done.stderr
    assert "'cut': True" in done.stdout and "'shown': 3" in done.stdout
    assert int(done.stdout.split("peak_mb")[1]) < 600  # 32 MB of output kept, parsed and formatted


def test_glob_fallback_skips_a_folder_it_cannot_read(tmp_path: Path) -> None:
    """As an unprivileged user (root reads everything): one locked folder, the rest still listed."""
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to an unprivileged user for an unreadable folder")
    # Outside pytest's private (0700) temp folder, so that the unprivileged user can reach it.
    base = Path(tempfile.mkdtemp(prefix="catui-glob-"))
    base.chmod(0o755)
    root = base / "tree"
    (root / "open").mkdir(parents=True)
    (root / "locked").mkdir()
    (root / "open" / "seen.py").write_text("")
    (root / "locked" / "hidden.py").write_text("")
    (root / "locked").chmod(0)
    script = textwrap.dedent(f"""
        import asyncio, json, os
        from pathlib import Path
        import asyncio.base_events, asyncio.threads, concurrent.futures.thread  # noqa: before losing root
        from catui.tools.base import ToolContext
        from catui.tools.glob import GlobTool
        from catui.tools.glob_input import GlobInput
        args = GlobInput(pattern="**/*.py")  # built now: input models build (and import) on first use
        # Glob loads its search modules on first use (catui.lazy); import them while the checkout (a 0700
        # temporary folder in CI) is still readable.
        import catui.tools.ignore, catui.tools.search_engine, catui.tools.search_process  # noqa: E401
        os.setgid(65534); os.setuid(65534)  # the interpreter's own files stay readable: all is imported
        root = Path({str(root)!r})
        ctx = ToolContext(cwd=root, project_root=root)
        result = asyncio.run(GlobTool(force_fallback=True).call(args, ctx))
        print(json.dumps([result.is_error, result.content]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    (root / "locked").chmod(0o755)
    shutil.rmtree(base)
    assert done.returncode == 0, done.stderr
    is_error, content = json.loads(done.stdout)
    assert not is_error and content == str(root / "open" / "seen.py")


@pytest.mark.parametrize("separator", [b"\n", b"\0"])
async def test_a_search_process_output_is_cut_at_a_whole_record(tmp_path: Path, separator: bytes) -> None:
    from catui.tools.search_process import run_search_process

    record = "name-" + ("\\n" if separator == b"\n" else "\\0")
    done = await run_search_process(["sh", "-c", f"while :; do printf '{record}'; done"], cwd=str(tmp_path),
                                    max_output=10_000, separator=separator)
    assert done.cut and 0 < len(done.stdout) <= 10_000
    assert done.stdout.endswith(separator) and set(done.stdout.split(separator)[:-1]) == {b"name-"}
