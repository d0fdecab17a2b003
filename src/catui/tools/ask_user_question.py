"""AskUserQuestion: put multiple-choice questions to the user (interactive sessions only)."""

from __future__ import annotations

from typing import Any, ClassVar

from catui.tools.base import Tool, ToolContext, ToolResult

DESCRIPTION = """\
Ask the user one to four multiple-choice questions while you work, and get their answers.

Use it to settle ambiguous instructions, to learn preferences, or to let the user choose between \
approaches you have identified. Do not use it for permission to proceed (the permission system asks for \
that) or for questions you can answer by reading the code.

- Each question has a short header (a chip label of at most 12 characters), two to four options (a concise \
label and a description of what choosing it means), and multiSelect when several options may be chosen.
- The user can always answer in their own words instead of picking an option; do not add an "Other" option.
- Put your recommended option first and add "(Recommended)" to its label."""


class QuestionNotAnswered(Exception):
    """Raised by an ``ask_user`` relay when whoever was asked declined; the message says why."""


def ask_user_question_enabled(*, interactive: bool) -> bool:
    """AskUserQuestion is offered only when a person can answer (never in print mode)."""
    return interactive


class AskUserQuestionTool(Tool):
    name = "AskUserQuestion"
    input_model_ref: ClassVar[str] = "catui.tools.ask_user_question_input:AskUserQuestionInput"
    read_only = True

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled

    @property
    def description(self) -> str:
        return DESCRIPTION

    def is_enabled(self) -> bool:
        return self.enabled

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        # lazy (catui.lazy): loaded when the input was validated
        from catui.tools.ask_user_question_input import AskUserQuestionInput
        assert isinstance(args, AskUserQuestionInput)
        questions = [q.model_dump(exclude_none=True) for q in args.questions]
        # A host (an SDK can_use_tool that asked the user itself) may hand the answers in with the call.
        if args.answers:
            answers: dict[str, str] = dict(args.answers)
        elif ctx.ask_user is None:
            return ToolResult(
                "There is no user to ask in this session (it is not interactive). Make a reasonable choice, "
                "say which one you made, and continue.",
                is_error=True,
            )
        else:
            try:
                answers = await ctx.ask_user(questions)
            except QuestionNotAnswered as declined:
                return ToolResult(f"The question was not answered: {declined} Make a reasonable choice, say which "
                                  "one you made, and continue.", is_error=True,
                                  data={"questions": questions, "answers": {}})
        if not answers:
            return ToolResult(
                "The user dismissed the questions without answering.",
                is_error=True,
                data={"questions": questions, "answers": {}},
            )
        listed = ", ".join(f'"{q}"="{a}"' for q, a in answers.items())
        return ToolResult(
            f"The user answered: {listed}. Continue with these answers in mind.",
            data={"questions": questions, "answers": dict(answers)},
        )
