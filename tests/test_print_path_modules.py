"""The modules a trivial print-mode run imports are the ones listed in ``tests/data/print_path_modules.txt``.

Start-up is a feature (``catui.lazy``): each module on the path of ``catui -p hi --output-format json``
costs every run its load time. This test runs that command against the loopback Messages API server in
a fresh process (temporary HOME, project and catui home; no settings) and compares what it imported,
catui's own modules and the third-party top-level packages, with the list kept in the repository. It is
not a timing assertion: a module joining the path fails it until the list is changed on purpose, in
the same commit that explains why the run needs it. To rewrite the list after such a change::

    .venv/bin/python tests/test_print_path_modules.py --write
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST_FILE = ROOT / "tests" / "data" / "print_path_modules.txt"

# Runs catui's entry point as `python -m catui` would and writes, at exit, what the run imported beyond
# what the interpreter had loaded before it (site hooks of the machine are not catui's doing).
PROBE = """
import atexit, json, runpy, sys
before = set(sys.modules)
out = sys.argv[1]

def report():
    stdlib = sys.stdlib_module_names
    names = set()
    for name in set(sys.modules) - before:
        top = name.split(".")[0]
        if top == "catui":
            names.add(name)
        elif top not in stdlib and not top.startswith("_"):
            names.add(top)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(sorted(names), f)

atexit.register(report)
sys.argv = ["catui", "-p", "hi", "--output-format", "json"]
runpy.run_module("catui", run_name="__main__", alter_sys=True)
"""


def imported_by_trivial_run() -> list[str]:
    """catui's modules and the third-party top-level packages a trivial print-mode run imports."""
    sys.path.insert(0, str(ROOT))
    from tests.support.anthropic_server import AnthropicTestServer

    script = {"turns": [{"content": [{"type": "text", "text": "pong"}], "repeat": True}]}
    with tempfile.TemporaryDirectory(prefix="catui-print-path-") as tmp, AnthropicTestServer(script) as server:
        home, project, out = Path(tmp) / "home", Path(tmp) / "project", Path(tmp) / "modules.json"
        home.mkdir()
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CATUI_", "CLAUDE_", "OPENAI_"))}
        env.update(HOME=str(home), CATUI_HOME=str(home / ".catui"), NO_PROXY="127.0.0.1,localhost", **server.env())
        done = subprocess.run([sys.executable, "-c", PROBE, str(out)], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["result"] == "pong"
        modules: list[str] = json.loads(out.read_text(encoding="utf-8"))
        return modules


def listed_modules() -> list[str]:
    lines = LIST_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_the_trivial_print_run_imports_the_listed_modules() -> None:
    imported = set(imported_by_trivial_run())
    listed = set(listed_modules())
    joined, left = sorted(imported - listed), sorted(listed - imported)
    assert not joined and not left, (
        f"the trivial print-mode run's imports changed: joined {joined or 'none'}, left {left or 'none'}. "
        "A module that joins must be needed by every run (else import it where it is used, see catui.lazy); "
        f"then update {LIST_FILE.relative_to(ROOT)} with: python tests/test_print_path_modules.py --write"
    )


HEADER = """\
# What `catui -p hi --output-format json` imports (a fresh process, no settings, the loopback Anthropic
# server): catui's own modules and third-party top-level packages. tests/test_print_path_modules.py compares
# this list with a real run; a module joins the print path only by a deliberate change to this file
# (see catui/lazy.py for what loads lazily and why). Rewrite: python tests/test_print_path_modules.py --write
"""


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_print_path_modules.py --write")
    LIST_FILE.write_text(HEADER + "\n".join(imported_by_trivial_run()) + "\n", encoding="utf-8")
    print(f"wrote {LIST_FILE}")
