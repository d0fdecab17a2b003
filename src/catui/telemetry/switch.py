"""Turning OpenTelemetry on for a run: the one place the SDK is imported, and only when asked for.

:func:`start_telemetry` returns None when telemetry is off (nothing of
OpenTelemetry is imported then), else the process's
:class:`~catui.telemetry.otel_telemetry.OtelTelemetry` for these exporter
settings: one per process and settings, so the SDK's many apps and a Ray
worker's many jobs share one set of exporters. A missing package is a
:class:`~catui.errors.ConfigurationError` with the install command.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from catui.errors import ConfigurationError

if TYPE_CHECKING:
    from catui.telemetry.hooks import RunTelemetry

ENABLE_ENV = ("CLAUDE_CODE_ENABLE_TELEMETRY", "CATUI_ENABLE_TELEMETRY")
_TRUE = ("1", "true", "yes", "on")
_STARTED: dict[Any, RunTelemetry] = {}


def telemetry_requested(env: Mapping[str, str]) -> bool:
    """Whether the run exports OpenTelemetry data (``CLAUDE_CODE_ENABLE_TELEMETRY`` / ``CATUI_ENABLE_TELEMETRY``)."""
    return any((env.get(name) or "").strip().lower() in _TRUE for name in ENABLE_ENV)


def start_telemetry(env: Mapping[str, str]) -> RunTelemetry | None:
    """The run's telemetry (see the module docstring); None when off or when every exporter is ``none``."""
    if not telemetry_requested(env):
        return None
    # lazy: the settings parser, only for runs that asked for telemetry
    from catui.telemetry.otel_config import INSTALL_HINT, otel_settings

    settings = otel_settings(env)
    if not settings.any_exporter:
        return None
    started = _STARTED.get(settings)
    if started is not None:
        return started
    try:
        # lazy: the OpenTelemetry SDK and exporters (~100 ms), only for runs that export telemetry
        from catui.telemetry.otel_telemetry import OtelTelemetry

        telemetry: RunTelemetry = OtelTelemetry(settings)
    except ImportError as exc:
        which = next(name for name in ENABLE_ENV if env.get(name))
        missing = exc.name or "opentelemetry"
        raise ConfigurationError(
            f"telemetry is on ({which}) but the OpenTelemetry package {missing!r} is not installed; "
            f"install it with: {INSTALL_HINT}  (or turn telemetry off)") from None
    _STARTED[settings] = telemetry
    return telemetry
