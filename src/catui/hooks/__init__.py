"""Settings-defined hooks in Claude Code's format: shell commands run at fixed moments of an agent's work.

``config`` reads them (settings files, agent definitions), ``execute`` runs
one command, ``output`` interprets its exit status and JSON, ``runner``
combines the answers per event, ``apply`` turns them into permission
decisions and tool-result feedback, and ``install`` wires runners into an
application and its sub-agents. See docs/hooks.md.
"""
