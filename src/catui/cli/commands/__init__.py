"""The ``catui`` subcommands other than a run: ``agents``, ``skills``, ``tasks``, ``worktrees``, ``teams``,
``sandbox``, ``batch`` and ``demo``, each with the helpers only it uses."""
