"""catui.lazy: packages resolve their re-exports on use, and names kept apart from lazily loaded classes agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import catui.worktree
from catui.app.prompt import SKILL_TOOL_NAME
from catui.skills.tool import SkillTool


def test_a_package_re_export_resolves_to_the_submodules_object() -> None:
    from catui.worktree.create import create_worktree

    assert catui.worktree.create_worktree is create_worktree


def test_an_unknown_name_of_a_lazy_package_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"'catui\.worktree' has no attribute 'no_such_name'"):
        _ = catui.worktree.no_such_name


def test_importing_one_submodule_leaves_its_siblings_unloaded() -> None:
    code = ("import sys, catui.worktree.guard, catui.tasks.model, catui.state.schema; "
            "print(sorted(m for m in ('catui.worktree.cleanup', 'catui.tasks.registry', 'catui.state.db') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_skill_tools_name_without_its_module() -> None:
    assert SkillTool.name == SKILL_TOOL_NAME


def test_the_sub_agent_runtime_is_built_on_first_use(tmp_path: Path) -> None:
    from catui.app import RunOptions, build_app
    from catui.subagents.install import SubagentHandle
    from catui.subagents.runtime import SubagentRuntime

    script = tmp_path / "script.yaml"
    script.write_text("turns:\n  - content: [{type: text, text: 'pong'}]\n", encoding="utf-8")
    app = build_app(RunOptions(cwd=tmp_path, model=f"scripted:{script}", write_transcript=False))
    system = app.services.subagents
    assert system is not None and not system.built
    assert "Agent" in [t.name for t in app.session.tools]  # offered before anything is built
    built: list[bool] = []
    system.on_built.append(lambda: built.append(system.built))
    # A tool reaching the runtime through its context builds it; the context keeps the same handle.
    handle = app.session.ctx.services.subagents
    assert isinstance(handle, SubagentHandle) and handle.built_runtime() is None
    assert handle.foreground_ids() == []
    assert system.built and built == [True]
    assert app.session.ctx.services.subagents is handle and handle.built_runtime() is system.runtime
    assert isinstance(system.runtime, SubagentRuntime)
    assert system.messaging is not None
    assert app.session.ctx.services.output_review is handle and system.parts().review is not None
    assert built == [True], "the hooks run once"
    assert not (tmp_path / ".catui" / "state.db").exists(), "nothing named an agent: no state.db"
