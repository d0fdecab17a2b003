"""``catui batch`` through the real CLI and ``run_batch`` from the SDK, on the in-process executor (the Ray
executor's batch runs are in test_ray_executor.py). Scripted model; tasks that must stay running wait in a
Bash loop for a file the test creates, so nothing here depends on timing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from catui.app import RunOptions
from catui.app.batch import BatchTask, finished_ids, parse_tasks, run_batch
from catui.errors import ConfigurationError
from catui.models.resolve import clear_provider_cache
from tests.support.cli_env import SRC

GUARD_S = 120  # a broken scenario fails here instead of hanging (not a timing assertion)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "catui-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CATUI_EXECUTOR", raising=False)
    clear_provider_cache()


def task_turns(key: str, wait_for: Path | None = None) -> list[dict[str, Any]]:
    """The agent's turns for the task whose prompt is ``Task <key>``: maybe a Bash wait, then its answer."""
    match = {"first_user_contains": f"Task {key}."}
    turns: list[dict[str, Any]] = []
    if wait_for is not None:
        command = f"while [ ! -e {wait_for} ]; do sleep 0.05; done"
        turns.append({"match": {**match, "last_is_tool_result": False},
                      "content": [{"type": "tool_use", "name": "Bash", "input": {"command": command}}]})
    turns.append({"match": {**match, "last_is_tool_result": wait_for is not None},
                  "content": [{"type": "text", "text": f"Answer {key}."}]})
    return turns


def write_script(tmp_path: Path, turns: list[dict[str, Any]]) -> Path:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return script


def batch_cli(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "CATUI_HOME": str(tmp_path / "catui-home"), "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-m", "catui", "batch", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_twenty_tasks_interrupted_then_resumed(tmp_path: Path) -> None:
    release = tmp_path / "release"
    keys = [f"{n:02d}" for n in range(1, 21)]
    held = {"07", "13"}
    turns = [turn for key in keys for turn in task_turns(key, release if key in held else None)]
    script = write_script(tmp_path, turns)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"t{k}", "prompt": f"Task {k}."}) + "\n" for k in keys))
    results = tmp_path / "results.jsonl"
    args = (str(tasks), "-o", str(results), "--concurrency", "4", "--model", f"scripted:{script}",
            "--permission-mode", "bypassPermissions")

    first = batch_cli(tmp_path, *args)
    deadline = time.monotonic() + GUARD_S
    while len(result_lines(results)) < 18:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the 18 free tasks never finished"
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)  # the two held tasks are still running: interrupt the batch
    _, err = first.communicate(timeout=GUARD_S)
    assert first.returncode == 130, err
    assert "batch interrupted" in err and "run the same command again to resume" in err
    after_first = result_lines(results)
    assert sorted(r["id"] for r in after_first) == sorted(f"t{k}" for k in keys if k not in held)
    assert all(r["status"] == "completed" and r["result"] == f"Answer {r['id'][1:]}." for r in after_first)

    release.write_text("go", encoding="utf-8")
    second = batch_cli(tmp_path, *args)
    _, err = second.communicate(timeout=GUARD_S)
    assert second.returncode == 0, err
    final = result_lines(results)
    assert len(final) == 20 and len({r["id"] for r in final}) == 20  # nothing ran twice
    assert {r["id"] for r in final[18:]} == {"t07", "t13"}
    assert "batch: 20 tasks — 2 completed, 0 failed, 18 skipped" in err
    assert "[20/20]" in err  # progress lines on stderr (not a terminal here)


def test_results_go_to_stdout_without_output_file_and_failures_are_reported(tmp_path: Path) -> None:
    script = write_script(tmp_path, task_turns("a"))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "ok", "prompt": "Task a."}) + "\n"
                     + json.dumps({"id": "bad", "prompt": "Task b.", "agent": "no-such-agent"}) + "\n")
    proc = batch_cli(tmp_path, str(tasks), "--model", f"scripted:{script}")
    out, err = proc.communicate(timeout=GUARD_S)
    assert proc.returncode == 1, err
    rows = {r["id"]: r for r in map(json.loads, out.splitlines())}
    assert rows["ok"]["status"] == "completed" and rows["ok"]["result"] == "Answer a."
    assert rows["ok"]["usage"]["output_tokens"] > 0 and rows["ok"]["branch"] is None
    assert rows["bad"]["status"] == "failed" and "no-such-agent" in rows["bad"]["error"]
    assert "1 completed, 1 failed" in err


@pytest.mark.parametrize(("text", "message"), [
    ("{not json}\n", "tasks.jsonl line 1: not JSON"),
    ('{"prompt": ""}\n', 'tasks.jsonl line 1: "prompt" must be a non-empty string'),
    ('{"prompt": "x", "id": "a"}\n{"prompt": "y", "id": "a"}\n', "tasks.jsonl line 2: id 'a' is used twice"),
    ('{"prompt": "x", "priority": 3}\n', "tasks.jsonl line 1: unknown key 'priority'"),
])
def test_bad_task_files_get_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(text, encoding="utf-8")
    proc = batch_cli(tmp_path, str(tasks))
    out, err = proc.communicate(timeout=GUARD_S)
    assert proc.returncode != 0 and out == ""
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_parse_tasks_defaults() -> None:
    [task] = parse_tasks(['{"prompt": "hi", "repo": "sub", "agent": "Explore"}'], "x")
    assert task == BatchTask(id="line-1", prompt="hi", agent="Explore", cwd="sub")
    with pytest.raises(ConfigurationError, match='x line 1: "model" must be a string'):
        parse_tasks(['{"prompt": "hi", "model": 3}'], "x")


async def test_sdk_run_batch_resumes_from_its_results_file(tmp_path: Path) -> None:
    script = write_script(tmp_path, [turn for key in ("a", "b", "c") for turn in task_turns(key)])
    results = tmp_path / "out.jsonl"
    results.write_text(json.dumps({"id": "a", "status": "completed"}) + "\n{torn", encoding="utf-8")
    options = RunOptions(cwd=tmp_path, model=f"scripted:{script}")
    seen: list[str] = []
    summary = await run_batch(
        [{"id": "a", "prompt": "Task a."}, {"id": "b", "prompt": "Task b."}, BatchTask("c", "Task c.")],
        results=results, options=options, concurrency=2, on_result=lambda r, _s: seen.append(r.id),
    )
    assert summary.total == 3 and summary.skipped == 1 and summary.completed == 2
    assert finished_ids(results) == {"a", "b", "c"}  # new lines start after the torn one
    assert sorted(seen) == ["b", "c"] and sorted(r.result or "" for r in summary.results) == ["Answer b.", "Answer c."]
    with pytest.raises(ConfigurationError, match="concurrency must be 1 or more"):
        await run_batch([], concurrency=0)
