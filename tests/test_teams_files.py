"""Team files on disk: the lock and atomic writes across processes, inbox read marks, names and colours."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from catui.subagents.teams.files import TeamFileError, TeamFiles, list_teams, team_name_problem
from catui.subagents.teams.protocol import colour_for, join_blocks, shutdown_first, unique_name
from tests.support.cli_env import SRC

WRITER = """
import sys
from pathlib import Path
from catui.subagents.teams.files import TeamFiles
files = TeamFiles(Path(sys.argv[1]), "alpha")
for i in range(int(sys.argv[3])):
    files.append_message("worker", {"from": sys.argv[2], "text": f"{sys.argv[2]} {i}", "timestamp": "t"})
"""

TAKER = """
import json, sys
from pathlib import Path
from catui.subagents.teams.files import TeamFiles
files = TeamFiles(Path(sys.argv[1]), "alpha")
taken = []
for _ in range(int(sys.argv[2])):
    taken.extend(e["text"] for e in files.take_unread("worker"))
print(json.dumps(taken))
"""


def test_two_processes_write_one_inbox_while_a_third_takes_from_it(tmp_path: Path) -> None:
    root = tmp_path / "teams"
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    count = 150
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), name, str(count)], env=env)
               for name in ("one", "two")]
    taker = subprocess.Popen([sys.executable, "-c", TAKER, str(root), "200"], env=env, stdout=subprocess.PIPE,
                             text=True)
    out, _ = taker.communicate(timeout=60)
    assert all(w.wait(timeout=60) == 0 for w in writers) and taker.returncode == 0
    taken = json.loads(out)
    files = TeamFiles(root, "alpha")
    entries = json.loads(files.inbox_path("worker").read_text())  # whole, valid JSON
    assert len(entries) == 2 * count
    assert len(taken) == len(set(taken))  # nothing delivered twice
    left = [e["text"] for e in files.take_unread("worker")]
    assert sorted(taken + left) == sorted(f"{n} {i}" for n in ("one", "two") for i in range(count))
    assert all(e["read"] for e in json.loads(files.inbox_path("worker").read_text()))
    # Each writer's messages stay in the order it wrote them.
    texts = [e["text"] for e in entries]
    for name in ("one", "two"):
        mine = [t for t in texts if t.startswith(name)]
        assert mine == [f"{name} {i}" for i in range(count)]
    assert not list((root / "alpha" / "inboxes").glob(".*.tmp"))


def test_damaged_files_are_named_with_the_fix(tmp_path: Path) -> None:
    files = TeamFiles(tmp_path, "alpha")
    files.inbox_path("worker").parent.mkdir(parents=True)
    files.inbox_path("worker").write_text("[{", encoding="utf-8")
    try:
        files.take_unread("worker")
    except TeamFileError as exc:
        assert str(files.inbox_path("worker")) in str(exc) and "fix or delete the file" in str(exc)
    else:
        raise AssertionError("a damaged inbox was read")
    assert list_teams(tmp_path) == []
    files.write_config({"name": "alpha", "members": []})
    assert list_teams(tmp_path) == ["alpha"]
    assert team_name_problem("../x") is not None and team_name_problem("alpha-2") is None


def test_names_colours_and_delivery_order() -> None:
    assert unique_name("w1", ["team-lead", "w1"]) == "w1-2"
    assert unique_name("w1", ["w1", "w1-2"]) == "w1-3"
    assert unique_name("fresh", ["w1"]) == "fresh"
    assert [colour_for(i) for i in range(4)] == ["blue", "green", "yellow", "purple"]
    entries = [{"from": "bee", "text": "hello", "summary": "hi", "color": "green"},
               {"from": "team-lead", "text": '{"type":"shutdown_request","requestId":"r"}'}]
    ordered = shutdown_first(entries)
    assert ordered[0]["from"] == "team-lead"
    assert join_blocks(ordered, with_summary=True) == (
        '<teammate-message teammate_id="team-lead">\n{"type":"shutdown_request","requestId":"r"}\n'
        '</teammate-message>\n\n<teammate-message teammate_id="bee" color="green" summary="hi">\nhello\n'
        "</teammate-message>")
    assert join_blocks(entries[:1], with_summary=False) == (
        '<teammate-message teammate_id="bee" color="green">\nhello\n</teammate-message>')
