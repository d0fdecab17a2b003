"""A Ray agent's span joins the caller's trace: the real CLI with the ray executor on a local cluster.

The background agent runs on a Ray worker (another process), which exports its own spans and events to
the same OTLP receiver; the trace context travels in the remote job (W3C ``traceparent``). The foreground
agent and its nested agent run in the CLI's process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

from tests.support.anthropic_server import AnthropicTestServer
from tests.support.cli_env import cli_env, git_repo, run_catui
from tests.support.git_repos import GIT_ENV, git
from tests.support.otlp_receiver import OtlpReceiver
from tests.test_telemetry_otlp import AGENTS, agent_span, parent_of, script_for, tool_span


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """One local cluster on 127.0.0.1 (the CLI joins it through RAY_ADDRESS)."""
    os.environ["RAY_AUTH_MODE"] = "disabled"
    context = ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        yield str(context.address_info["gcs_address"])
    finally:
        ray.shutdown()


def test_a_ray_agent_hangs_under_its_agent_call_across_processes(tmp_path: Path, ray_cluster: str) -> None:
    repo = git_repo(tmp_path)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    with OtlpReceiver() as receiver, AnthropicTestServer(script_for(repo)) as server:
        env = cli_env(tmp_path, server, **receiver.env(), **GIT_ENV, CATUI_MAX_SUBAGENT_SPAWN_DEPTH="2",
                      GIT_CONFIG_GLOBAL=str(tmp_path / "gitconfig"), CATUI_EXECUTOR="ray", RAY_ADDRESS=ray_cluster,
                      RAY_AUTH_MODE="disabled")
        done = run_catui(repo, env, "-p", "Start the work", "--agents", json.dumps(AGENTS),
                         "--permission-mode", "bypassPermissions", timeout=240)
        assert done.returncode == 0, done.stderr
        receiver.wait_for(lambda rx: sum(s["name"] == "catui.agent" for s in rx.spans) == 3, "three agent spans")
        spans: list[dict[str, Any]] = list(receiver.spans)
        logs = list(receiver.logs)
    turn = parent_of(tool_span(spans, "toolu_lead"), spans)  # the first turn (a notification's may follow)
    lead, side = agent_span(spans, "lead", "Lead work"), agent_span(spans, "helper", "Side work")
    nested = agent_span(spans, "helper", "Nested work")
    assert parent_of(lead, spans) is tool_span(spans, "toolu_lead")
    assert parent_of(nested, spans) is tool_span(spans, "toolu_nested")
    # the Ray agent: its span comes from the worker's process, its parent from the CLI's
    assert parent_of(side, spans) is tool_span(spans, "toolu_side")
    assert parent_of(tool_span(spans, "toolu_side"), spans) is turn
    assert side["trace_id"] == turn["trace_id"]
    assert side["resource"]["process.pid"] != turn["resource"]["process.pid"]
    assert side["attributes"]["catui.agent.is_async"] is True
    side_bash = tool_span(spans, "toolu_side_bash")
    assert parent_of(side_bash, spans) is side and side_bash["resource"]["process.pid"] == side["resource"]["process.pid"]
    side_requests = [s for s in spans if s["name"] == "claude_code.llm_request" and s["parent_span_id"] == side["span_id"]]
    assert len(side_requests) == 2
    # the worker's events carry the caller's session and prompt ids
    prompt = next(r for r in logs if r["attributes"].get("event.name") == "user_prompt")
    worker_events = [r for r in logs if r["attributes"].get("catui.agent.id") == side["attributes"]["catui.agent.id"]
                     and r["attributes"].get("event.name") == "api_request"]
    assert len(worker_events) == 2
    for record in worker_events:
        assert record["attributes"]["prompt.id"] == prompt["attributes"]["prompt.id"]
        assert record["attributes"]["session.id"] == prompt["attributes"]["session.id"]
        assert "parent_agent_id" not in record["attributes"]  # started by the main session, as Claude Code
