"""Settings files (settings.py), feature switches (flags.py) and start-up context (context.py)."""
