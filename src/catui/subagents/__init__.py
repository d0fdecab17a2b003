"""Claude Code's sub-agent system: the Agent tool, planning and running a child session (foreground,
background, fork, resume), its result, worktrees, messaging between agents, teams and executors."""
