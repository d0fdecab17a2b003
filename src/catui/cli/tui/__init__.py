"""The interactive terminal session: the screen and line editor, the live view of a turn, the permission
and question prompts, prompt history, the status line and the slash commands."""
