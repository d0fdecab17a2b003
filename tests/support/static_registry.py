"""A fixed agent registry for tests that need the Agent tool without loading agent files."""

from __future__ import annotations

from catui.agents.definition import AgentDefinition


class StaticRegistry:
    """What the Agent tool and the sub-agent runtime read from a registry (catui.tools.base.AgentCatalogue)."""

    def __init__(self, agents: list[AgentDefinition]) -> None:
        self.active = agents
        self.version = 1

    def get(self, name: str) -> AgentDefinition | None:
        return next((a for a in self.active if a.agent_type == name), None)

    def reload_if_changed(self) -> bool:
        return False  # nothing on disk to change
