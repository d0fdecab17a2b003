"""The input models of :mod:`catui.tools.ask_user_question`, loaded on the tool's first validation (:mod:`catui.lazy`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from catui.tools.tool_input import ToolInput


def _require_multi_select(schema: dict[str, Any]) -> None:
    # Claude Code's schema lists multiSelect as required (with default false); validation stays lenient.
    schema["required"] = [*schema.get("required", []), "multiSelect"]


class QuestionOption(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    label: str = Field(description="The option's text as shown to the user (1-5 words).")
    description: str = Field(description="What choosing this option means or implies.")
    markdown: str | None = Field(
        default=None,
        description="Optional preview shown beside the option (a code snippet, an ASCII layout); "
        "single-choice questions only.",
    )


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_require_multi_select, defer_build=True)

    question: str = Field(description="The full question, ending with a question mark.")
    header: str = Field(description="A very short label for the question (at most 12 characters).")
    options: list[QuestionOption] = Field(min_length=2, max_length=4, description="The choices (2-4).")
    multiSelect: bool = Field(default=False, description="Allow choosing more than one option.")


class AskUserQuestionInput(ToolInput):
    questions: list[Question] = Field(min_length=1, max_length=4, description="The questions to ask (1-4).")
    answers: dict[str, str] | None = Field(
        default=None, description="Answers already collected, by question text (filled in by the host, not you)."
    )
    annotations: dict[str, Any] | None = Field(
        default=None, description="Per-question notes from the host, such as the preview a user looked at."
    )
    metadata: dict[str, Any] | None = Field(default=None, description="Tracking data for the host; not shown.")
