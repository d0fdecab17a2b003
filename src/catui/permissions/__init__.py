"""Permission modes, rules (rules.py), decisions (decide.py) and the context built from settings (from_settings.py)."""
