"""Custom slash commands: ``.claude/commands/**/*.md`` (project and user) and a plugin's ``commands/``.

A command is a Markdown file whose body becomes the user's message when someone types ``/name args``
(in the terminal, in print mode, through an SDK) or when the model loads it with the Skill tool.
``discovery`` finds and reads them into :class:`~catui.skills.model.SkillDefinition` entries of
kind ``command`` (they live in the session's :class:`~catui.skills.registry.SkillRegistry` beside
the skills, as Claude Code keeps one list); ``expand`` turns a body and its arguments into what the
model receives; ``prompt`` does that for a typed ``/name args`` line. docs/commands.md describes them.
"""
