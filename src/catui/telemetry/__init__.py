"""catui's telemetry: its events as local JSON lines (spec 16) and an OpenTelemetry span per agent."""
