"""Turning OpenTelemetry on and pointing it somewhere: the switches and OTEL_* variables as Claude Code reads
them, settings' ``env``, console and gRPC exporters, bad values and a missing package (real CLI runs)."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from catui.errors import ConfigurationError
from catui.telemetry.otel_config import otel_settings
from catui.telemetry.otel_metrics import code_changes, edit_language
from catui.telemetry.switch import start_telemetry, telemetry_requested
from tests.support.cli_env import SRC
from tests.support.otlp_receiver import OtlpReceiver

SCRIPT = {"turns": [
    {"match": {"last_is_tool_result": False},
     "content": [{"type": "tool_use", "id": "toolu_ls", "name": "Bash", "input": {"command": "echo hi"}}]},
    {"content": [{"type": "text", "text": "The answer."}], "repeat": True},
]}


def test_the_switches_and_the_exporter_variables() -> None:
    assert not telemetry_requested({})
    assert telemetry_requested({"CLAUDE_CODE_ENABLE_TELEMETRY": "1"})
    assert telemetry_requested({"CATUI_ENABLE_TELEMETRY": "true"})
    assert not telemetry_requested({"CLAUDE_CODE_ENABLE_TELEMETRY": "0"})
    assert start_telemetry({}) is None
    # on, but every signal goes nowhere (Claude Code's default): nothing is started
    assert start_telemetry({"CLAUDE_CODE_ENABLE_TELEMETRY": "1"}) is None

    settings = otel_settings({
        "OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "console,otlp", "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://collector:4317",
        "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc,x-team=tools",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=traces",
        "OTEL_RESOURCE_ATTRIBUTES": "department=eng,service.name=my-catui",
        "OTEL_METRIC_EXPORT_INTERVAL": "10000", "OTEL_LOG_USER_PROMPTS": "1",
    })
    assert settings.traces.exporters == ("otlp",) and settings.traces.protocol == "http/protobuf"
    assert settings.traces.endpoint == "http://collector:4318/v1/traces"  # the base endpoint gets the signal's path
    assert dict(settings.traces.headers) == {"Authorization": "Bearer abc", "x-team": "traces"}
    assert settings.metrics.exporters == ("console", "otlp") and settings.metrics.protocol == "grpc"
    assert settings.metrics.endpoint == "http://collector:4317" and settings.metrics.interval_ms == 10000
    assert settings.logs.exporters == () and settings.logs.interval_ms == 5000
    assert settings.service_name == "my-catui" and ("department", "eng") in settings.resource
    assert settings.log_user_prompts and not settings.log_tool_details and settings.temporality == "delta"
    grpc = otel_settings({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert grpc.traces.endpoint == "http://localhost:4317"


@pytest.mark.parametrize(("env", "message"), [
    ({"OTEL_METRICS_EXPORTER": "otlp,prometheus"}, "OTEL_METRICS_EXPORTER='otlp,prometheus': 'prometheus' is not"),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL='http/json' is not supported"),
    ({"OTEL_LOGS_EXPORT_INTERVAL": "soon"}, "OTEL_LOGS_EXPORT_INTERVAL='soon' is not a number of milliseconds"),
    ({"OTEL_EXPORTER_OTLP_HEADERS": "Authorization"}, "OTEL_EXPORTER_OTLP_HEADERS: 'Authorization' is not key=value"),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "is not a URL"),
])
def test_bad_values_name_the_variable_and_the_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        otel_settings(env)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_lines_commits_and_languages_from_tool_calls() -> None:
    edit = code_changes("Edit", {"old_string": "a\nb", "new_string": "a\nb\nc\n"}, {"replacements": 2})
    assert (edit.added, edit.removed) == (6, 4)
    assert code_changes("Write", {"content": "x\ny"}, {"lines": 2}).added == 2
    assert code_changes("Bash", {"command": "git -C repo commit -m x && gh pr create -f"}, None).commits == 1
    assert code_changes("Bash", {"command": "cd x && gh pr create --fill"}, None).pull_requests == 1
    assert code_changes("Bash", {"command": "git commit-tree x"}, None).commits == 0
    assert edit_language("src/a.py") == "Python" and edit_language("README.md") == "Markdown"
    assert edit_language("Makefile") == "unknown"


def run_cli(tmp_path: Path, extra_env: dict[str, str], *args: str,
            python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "CATUI_HOME": str(tmp_path / "catui-home"), "PYTHONPATH": str(SRC), **extra_env}
    return subprocess.run([python, "-m", "catui", "-p", "Say hi", "--model", f"scripted:{script}",
                           "--permission-mode", "bypassPermissions", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_telemetry_on_through_the_settings_env_block(tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        settings = {"env": receiver.env()}
        done = run_cli(tmp_path, {}, "--settings", json.dumps(settings))
        assert done.returncode == 0, done.stderr
        receiver.wait_for(lambda rx: "claude_code.interaction" in rx.span_names(), "the turn's span")
    tool = next(s for s in receiver.spans if s["name"] == "claude_code.tool")
    assert tool["attributes"]["tool_name"] == "Bash" and tool["attributes"]["gen_ai.tool.call.id"] == "toolu_ls"
    request = next(s for s in receiver.spans if s["name"] == "claude_code.llm_request")
    assert request["attributes"]["gen_ai.system"] == "scripted"


def test_grpc_protocol_to_a_grpc_receiver(tmp_path: Path) -> None:
    with OtlpReceiver() as receiver:
        url = receiver.start_grpc()
        env = receiver.env(OTEL_EXPORTER_OTLP_PROTOCOL="grpc", OTEL_EXPORTER_OTLP_ENDPOINT=url,
                           OTEL_EXPORTER_OTLP_HEADERS="x-tenant=catui-tests")
        done = run_cli(tmp_path, env)
        assert done.returncode == 0, done.stderr
        receiver.wait_for(lambda rx: "claude_code.interaction" in rx.span_names() and bool(rx.events("api_request"))
                          and bool(rx.metric("claude_code.token.usage")), "spans, events and metrics over gRPC")
    assert any(h.get("x-tenant") == "catui-tests" for h in receiver.headers)


def test_console_exporters_write_to_stderr_and_leave_stdout_to_the_answer(tmp_path: Path) -> None:
    done = run_cli(tmp_path, {"CATUI_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "console",
                              "OTEL_LOGS_EXPORTER": "console"}, "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "The answer."
    assert '"name": "claude_code.interaction"' in done.stderr and "claude_code.api_request" in done.stderr


def test_a_bad_variable_is_one_line_naming_it(tmp_path: Path) -> None:
    done = run_cli(tmp_path, {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "zipkin"})
    assert done.returncode != 0
    assert "OTEL_TRACES_EXPORTER='zipkin': 'zipkin' is not an exporter" in done.stderr
    assert "Traceback" not in done.stderr


def python_without_opentelemetry(tmp_path: Path) -> str:
    """A virtual environment with every package of this one except OpenTelemetry's (linked, not copied)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    target = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    for source in site.getsitepackages():  # this venv's, then the interpreter's it may include
        for entry in Path(source).iterdir():
            skip = entry.name.startswith(("opentelemetry", "catui", "__editable__")) or entry.suffix == ".pth"
            if not skip and not (target / entry.name).exists():
                (target / entry.name).symlink_to(entry)
    return str(venv / "bin" / "python")


def test_a_missing_package_is_one_message_with_the_install_command(tmp_path: Path) -> None:
    python = python_without_opentelemetry(tmp_path)
    off = run_cli(tmp_path, {}, python=python)
    assert off.returncode == 0, off.stderr  # telemetry off: catui never needs the package
    done = run_cli(tmp_path, {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp"}, python=python)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "CLAUDE_CODE_ENABLE_TELEMETRY" in lines[0] and "pip install 'catui[telemetry]'" in lines[0]


def test_a_failed_request_is_an_api_error_event_and_an_error_span(tmp_path: Path) -> None:
    script = tmp_path / "failing.json"
    script.write_text(json.dumps({"turns": [
        {"error": {"status": 400, "type": "invalid_request_error", "message": "prompt is malformed"}}]}))
    project = tmp_path / "project"
    project.mkdir()
    with OtlpReceiver() as receiver:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
               "CATUI_HOME": str(tmp_path / "catui-home"), "PYTHONPATH": str(SRC), **receiver.env()}
        done = subprocess.run([sys.executable, "-m", "catui", "-p", "Say hi", "--model", f"scripted:{script}"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        receiver.wait_for(lambda rx: bool(rx.events("api_error")) and "claude_code.interaction" in rx.span_names(),
                          "the api_error event and the turn's span")
    [error] = receiver.events("api_error")
    assert error["attributes"]["status_code"] == 400 and "prompt is malformed" in error["attributes"]["error"]
    assert error["attributes"]["model"] and error["attributes"]["query_source"] == "main"
    [request] = [s for s in receiver.spans if s["name"] == "claude_code.llm_request"]
    assert request["status"] == 2 and request["attributes"]["success"] is False  # STATUS_CODE_ERROR
    [turn] = [s for s in receiver.spans if s["name"] == "claude_code.interaction"]
    assert turn["status"] == 2 and turn["attributes"]["catui.run.subtype"] == "error_during_execution"
    assert not receiver.events("api_request")
