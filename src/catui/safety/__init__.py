"""The handoff safety review: a model's check of a sub-agent's output before it reaches its parent."""
