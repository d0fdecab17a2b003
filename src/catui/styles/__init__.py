"""Output styles: how the main agent talks, chosen by the ``outputStyle`` setting (docs/output-styles.md).

``builtin`` holds catui's Explanatory and Learning styles, ``discovery`` reads the Markdown ones
(``.claude/output-styles/*.md`` of the project and the user, a plugin's ``output-styles/``), ``active``
picks the session's style; catui.session.prompt puts it into the system prompt.
"""
