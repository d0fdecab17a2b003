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


# long_lived_load changes the collector's state, which is process-wide: each case runs in its own interpreter.
LONG_LIVED_PROBE = """
import gc, sys
from catui.lazy import long_lived_load
{setup}
with long_lived_load():
    assert not gc.isenabled(), "paused inside"
    made = [[i] for i in range(1000)]
print(gc.isenabled(), gc.get_freeze_count(), gc.is_tracked(made), sum(gc.get_count()))
"""


def _probe(setup: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", LONG_LIVED_PROBE.format(setup=setup)], capture_output=True,
                          text=True, check=True)
    return done.stdout.split()


def test_a_long_lived_load_moves_what_it_made_out_of_the_young_generation_and_resumes_the_collector() -> None:
    enabled, frozen, tracked, young = _probe("")
    # Nothing stays frozen (the objects went to the oldest generation, still collectable), and the young
    # generation's count starts again from nothing rather than from the thousand lists.
    assert (enabled, frozen, tracked) == ("True", "0", "True")
    assert int(young) < 100


def test_a_long_lived_load_keeps_a_disabled_collector_disabled() -> None:
    assert _probe("gc.disable()")[0] == "False"


def test_a_long_lived_load_leaves_a_programs_own_frozen_objects_frozen() -> None:
    enabled, frozen, _, _ = _probe("kept = [[1]]; gc.freeze(); before = gc.get_freeze_count()")
    assert enabled == "True" and int(frozen) > 0
