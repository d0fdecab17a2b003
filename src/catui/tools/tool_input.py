"""ToolInput, the pydantic base of every tool's input model.

Importing it imports pydantic, so no module on the trivial print path does: a tool names its input model
by ``Tool.input_model_ref`` and the model's module is imported on the tool's first validation
(:mod:`catui.lazy`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, PrivateAttr


class ToolInput(BaseModel):
    """Base of every tool's input model: unknown fields are an error, as the schema says.

    Models are built on their first validation, not when defined (``defer_build``): a run that never calls
    a tool never pays for its validator, and the schemas sent to the model come from
    :mod:`catui.tools.static_schemas`.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    # Paths a file tool resolved for its permission check, by argument text: the call uses the same ones
    # (resolving again could follow a link that changed in between; see tools/files.resolve_once).
    _resolved_paths: dict[str, Path] = PrivateAttr(default_factory=dict)
