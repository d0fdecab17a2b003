"""The project state store: schema, tasks, names, worktrees, concurrency and crash safety."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from catui.state import SCHEMA_VERSION, StateDB, StateError, pid_is_alive


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CATUI_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def db(project: Path) -> StateDB:
    store = StateDB(project)
    yield store
    store.close()


def test_file_location_wal_and_schema_version(project: Path, db: StateDB) -> None:
    db.list_tasks()
    assert db.path == project / ".catui" / "state.db"
    assert "/state.db*" in (project / ".catui" / ".gitignore").read_text()
    raw = sqlite3.connect(db.path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"tasks", "agent_names", "worktrees", "schema_version"} <= tables
    raw.close()


def test_reopening_does_not_migrate_twice(project: Path, db: StateDB) -> None:
    db.upsert_task("t1", status="running")
    again = StateDB(project)
    assert again.get_task("t1")["status"] == "running"
    raw = sqlite3.connect(db.path)
    assert raw.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 1
    raw.close()
    again.close()


def test_newer_schema_is_refused(project: Path, db: StateDB) -> None:
    db.list_tasks()
    db.close()
    raw = sqlite3.connect(db.path)
    raw.execute("UPDATE schema_version SET version = 999")
    raw.commit()
    raw.close()
    with pytest.raises(StateError, match="newer catui"):
        StateDB(project).list_tasks()


def test_task_upsert_get_list(db: StateDB) -> None:
    first = db.upsert_task(
        "a1", type="local_agent", status="running", description="scan", pid=os.getpid(), meta={"k": [1, 2]}
    )
    assert first["status"] == "running" and first["meta"] == {"k": [1, 2]}
    assert first["created_at"] is not None and first["updated_at"] >= first["created_at"]
    db.upsert_task("a2", status="pending", parent_session_id="s1")
    updated = db.upsert_task("a1", status="completed", result="done", total_tokens=42, tool_uses=3)
    # Columns not named in an update keep their values.
    assert (updated["description"], updated["status"], updated["result"], updated["total_tokens"]) == (
        "scan",
        "completed",
        "done",
        42,
    )
    assert updated["created_at"] == first["created_at"]
    assert [t["id"] for t in db.list_tasks()] == ["a1", "a2"]
    assert [t["id"] for t in db.list_tasks(status="pending")] == ["a2"]
    assert [t["id"] for t in db.list_tasks(parent_session_id="s1")] == ["a2"]
    assert db.get_task("zz") is None
    assert db.delete_task("a2") and not db.delete_task("a2")


def test_unknown_task_field_is_named(db: StateDB) -> None:
    with pytest.raises(StateError, match=r"unknown task field.*colour"):
        db.upsert_task("x", colour="red")


def test_mark_interrupted_only_touches_dead_owners(db: StateDB) -> None:
    dead_pid, live_pid = 999_999_998, os.getpid()
    db.upsert_task("dead-running", status="running", pid=dead_pid)
    db.upsert_task("dead-pending", status="pending", pid=dead_pid)
    db.upsert_task("dead-completed", status="completed", pid=dead_pid)
    db.upsert_task("alive-running", status="running", pid=live_pid)
    db.upsert_task("no-pid", status="running")

    changed = db.mark_interrupted()

    assert sorted(changed) == ["dead-pending", "dead-running"]
    statuses = {t["id"]: t["status"] for t in db.list_tasks()}
    assert statuses == {
        "dead-running": "interrupted",
        "dead-pending": "interrupted",
        "dead-completed": "completed",
        "alive-running": "running",
        "no-pid": "running",
    }
    interrupted = db.get_task("dead-running")
    assert interrupted["ended_at"] is not None and str(dead_pid) in interrupted["error"]
    assert db.mark_interrupted() == []
    # The liveness check is injectable.
    assert db.mark_interrupted(lambda pid: False) == ["alive-running"]


def test_pid_is_alive() -> None:
    assert pid_is_alive(os.getpid())
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    assert not pid_is_alive(int(done.stdout))
    assert not pid_is_alive(0)


def test_names(db: StateDB) -> None:
    assert db.set_name("s1", "reviewer", "a1")
    assert db.get_name("s1", "reviewer") == "a1"
    assert db.get_name("s2", "reviewer") is None
    assert db.set_name("s1", "reviewer", "a2")  # overwrite by default
    assert db.get_name("s1", "reviewer") == "a2"
    assert not db.set_name("s1", "reviewer", "a3", overwrite=False)
    assert db.get_name("s1", "reviewer") == "a2"
    db.set_name("s1", "author", "a4")
    assert db.names("s1") == {"author": "a4", "reviewer": "a2"}
    assert db.release_name("s1", "reviewer") and not db.release_name("s1", "reviewer")
    assert db.names("s1") == {"author": "a4"}


def test_worktrees(db: StateDB, tmp_path: Path) -> None:
    row = db.record_worktree(
        "a1", path=tmp_path / "wt", branch="worktree-agent-a1", head_commit="abc", git_root=tmp_path,
        hook_based=False, meta={"symlinks": ["node_modules"]},
    )  # fmt: skip
    assert row["status"] == "active" and row["pid"] == os.getpid()
    stored = db.get_worktree("a1")
    assert stored is not None
    assert (stored["path"], stored["hook_based"], stored["meta"]) == (
        str(tmp_path / "wt"),
        False,
        {"symlinks": ["node_modules"]},
    )
    db.record_worktree("a2", path="/x", branch=None, head_commit=None, git_root=None, hook_based=True)
    assert db.update_worktree_status("a1", "kept")
    assert not db.update_worktree_status("nope", "kept")
    assert [r["agent_id"] for r in db.list_worktrees(status="kept")] == ["a1"]
    assert [r["agent_id"] for r in db.list_worktrees()] == ["a1", "a2"]
    assert db.get_worktree("a2")["hook_based"] is True
    with pytest.raises(StateError, match="must be one of active, creating, kept, removed"):
        db.update_worktree_status("a1", "gone")
    assert db.delete_worktree("a2") and db.get_worktree("a2") is None


def test_threads_writing_at_once(db: StateDB) -> None:
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for index in range(40):
                db.upsert_task(f"w{worker}-{index}", status="running", tool_uses=index)
                db.upsert_task(f"w{worker}-{index}", status="completed")
                db.set_name(f"s{worker}", f"n{index}", f"w{worker}-{index}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    tasks = db.list_tasks()
    assert len(tasks) == 320 and all(t["status"] == "completed" for t in tasks)
    assert all(len(db.names(f"s{w}")) == 40 for w in range(8))


def _process_writer(project: str, worker: int) -> None:
    store = StateDB(Path(project))
    for index in range(30):
        store.upsert_task(f"p{worker}-{index}", status="running", pid=os.getpid())
    store.close()


def test_processes_writing_at_once(project: Path, db: StateDB) -> None:
    db.list_tasks()  # create the file first, as the CLI would
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_process_writer, args=(str(project), w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert len(db.list_tasks()) == 120


def test_a_second_connection_sees_committed_writes(project: Path, db: StateDB) -> None:
    db.upsert_task("t1", status="running", description="survives")
    db.set_name("s", "n", "t1")
    # No close(): a crash would not close either. Another process must see the data.
    code = (
        "import sys; from pathlib import Path; from catui.state import StateDB; "
        "s = StateDB(Path(sys.argv[1])); t = s.get_task('t1'); "
        "print(t['status'], t['description'], s.get_name('s', 'n'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(project)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["running", "survives", "t1"]


def test_killed_writer_loses_nothing_committed(project: Path) -> None:
    code = (
        "import os, sys; from pathlib import Path; from catui.state import StateDB; "
        "s = StateDB(Path(sys.argv[1])); "
        "[s.upsert_task(f'k{i}', status='running') for i in range(50)]; "
        "os._exit(9)"  # dies without closing or checkpointing
    )
    done = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True, text=True)
    assert done.returncode == 9
    reader = StateDB(project)
    assert len(reader.list_tasks()) == 50
    reader.close()


def test_rollback_on_error_inside_a_transaction(db: StateDB) -> None:
    db.upsert_task("t", status="running")
    with pytest.raises(RuntimeError), db.transaction() as conn:
        conn.execute("UPDATE tasks SET status = 'completed' WHERE id = 't'")
        raise RuntimeError("boom")
    assert db.get_task("t")["status"] == "running"


def test_unopenable_database_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-file"
    folder.mkdir()
    with pytest.raises(StateError, match="cannot open the state database"):
        StateDB(tmp_path, path=folder).list_tasks()


def test_a_lone_surrogate_is_stored_as_a_replacement_character(db: StateDB) -> None:
    # A model's JSON "\ud800" escape reaches a task's description as a lone surrogate, which UTF-8 cannot
    # encode: the row is written with U+FFFD in its place instead of the write failing.
    row = db.upsert_task("t1", type="local_workflow", status="running", description="a\ud800b",
                         meta={"label": "\udfff"})
    assert row["description"] == "a\ufffdb" and row["meta"] == {"label": "\ufffd"}
    assert db.set_name("s1", "x\ud800", "a1")
    assert db.get_name("s1", "x\ufffd") == "a1"
