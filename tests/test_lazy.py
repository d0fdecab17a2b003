"""catui.lazy: packages resolve their re-exports on use, and names kept apart from lazily loaded classes agree."""

from __future__ import annotations

import subprocess
import sys

import pytest

import catui.worktree
from catui.app_prompt import SKILL_TOOL_NAME
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
