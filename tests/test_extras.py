"""Optional and heavy packages: imported only when a run uses them, and a missing one says so once, with the fix.

``mcp`` is a dependency (MCP is part of the contract), yet start-up must not
pay for it; OpenTelemetry and Ray stay optional; ripgrep's binary has a
pure-Python twin, so nothing is lost without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(*args: str, cwd: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "catui", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CATUI_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "catui-home"), PYTHONPATH=str(ROOT / "src"))
    return env


def test_mcp_is_a_dependency_but_not_imported_without_a_server(tmp_path: Path) -> None:
    from importlib.metadata import requires

    assert any(req.split(";")[0].replace(" ", "").startswith("mcp>=") for req in requires("catui") or []
               if "extra ==" not in req)
    # click's own rendering (a narrow terminal): the whole root command is built, and still no mcp
    help_modules = imported_modules("--help", cwd=tmp_path, env={**clean_env(tmp_path), "COLUMNS": "60"})
    assert "catui.cli.main" in help_modules and not [m for m in help_modules if m.split(".")[0] == "mcp"]
    script = tmp_path / "hi.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: hello}]\n", encoding="utf-8")
    run_modules = imported_modules("-p", "hi", "--model", f"scripted:{script}", cwd=tmp_path, env=clean_env(tmp_path))
    assert "catui.session.session" in run_modules and not [m for m in run_modules if m.split(".")[0] == "mcp"]


def test_a_configured_server_without_the_mcp_package_fails_saying_how_to_install_it(tmp_path: Path) -> None:
    """A broken install (no `mcp`): the server is reported failed with the install command, the run goes on."""
    script = tmp_path / "hi.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: hello}]\n", encoding="utf-8")
    config = json.dumps({"mcpServers": {"tools": {"command": sys.executable, "args": ["-c", "pass"]}}})
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    # sitecustomize runs at start-up: it makes `import mcp` fail in catui's process only
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['mcp'] = None\n", encoding="utf-8")
    env = clean_env(tmp_path)
    env["PYTHONPATH"] = f"{blocker}{os.pathsep}{env['PYTHONPATH']}"
    done = subprocess.run([sys.executable, "-m", "catui", "-p", "hi", "--model", f"scripted:{script}",
                           "--mcp-config", config, "--output-format", "stream-json", "--verbose"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    init = json.loads(done.stdout.splitlines()[0])
    assert {"name": "tools", "status": "failed"} in init["mcp_servers"]
    assert done.stderr.count("pip install 'mcp>=1.0'") == 1


def test_the_ray_executor_without_ray_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    script = tmp_path / "hi.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: hello}]\n", encoding="utf-8")
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['ray'] = None\n", encoding="utf-8")
    env = {**clean_env(tmp_path), "CATUI_EXECUTOR": "ray"}
    env["PYTHONPATH"] = f"{blocker}{os.pathsep}{env['PYTHONPATH']}"
    done = subprocess.run([sys.executable, "-m", "catui", "-p", "hi", "--model", f"scripted:{script}"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "pip install 'catui[ray]'" in done.stderr
