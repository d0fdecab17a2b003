"""One agent's conversation: the loop (model turn, tool round, hooks), its events, transcript, compaction,
context window, usage and budget, file checkpoints and resuming a stored session."""
