"""The OpenTelemetry switches and exporter settings, read from a run's environment as Claude Code reads them.

Telemetry is on with ``CLAUDE_CODE_ENABLE_TELEMETRY=1`` (or ``CATUI_ENABLE_TELEMETRY=1``), from the
process environment or a settings file's ``env`` block (``catui.telemetry.switch`` checks that). The
standard ``OTEL_*`` variables then say where each signal goes. This module only parses: it imports nothing of OpenTelemetry, so a run with
telemetry off pays for none of it. A bad value is a :class:`~catui.errors.ConfigurationError` naming
the variable and the values it takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from catui.errors import ConfigurationError

SIGNALS = ("traces", "metrics", "logs")
EXPORTERS = ("otlp", "console", "none")
PROTOCOLS = ("http/protobuf", "grpc")
DEFAULT_PROTOCOL = "http/protobuf"
DEFAULT_ENDPOINTS = {"http/protobuf": "http://localhost:4318", "grpc": "http://localhost:4317"}
HTTP_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics", "logs": "/v1/logs"}
# Claude Code's defaults: metrics every 60 s, logs (events) every 5 s; spans as logs.
DEFAULT_INTERVALS_MS = {"traces": 5000, "metrics": 60000, "logs": 5000}
INTERVAL_ENV = {"traces": "OTEL_TRACES_EXPORT_INTERVAL", "metrics": "OTEL_METRIC_EXPORT_INTERVAL",
                "logs": "OTEL_LOGS_EXPORT_INTERVAL"}
TEMPORALITIES = ("delta", "cumulative")
INSTALL_HINT = "pip install 'catui[telemetry]'"
_TRUE = ("1", "true", "yes", "on")


def is_true(value: str | None) -> bool:
    return value is not None and value.strip().lower() in _TRUE


@dataclass(frozen=True)
class SignalSettings:
    """Where one signal (traces, metrics or logs) goes."""

    signal: str
    exporters: tuple[str, ...]
    """``otlp`` and/or ``console``; empty when the signal is off (``none`` or unset)."""
    protocol: str = DEFAULT_PROTOCOL
    endpoint: str = ""
    """The full URL (``…/v1/traces`` for HTTP) or, for gRPC, the collector's address."""
    headers: tuple[tuple[str, str], ...] = ()
    interval_ms: int = 5000


@dataclass(frozen=True)
class OtelSettings:
    """Everything the exporters are built from; hashable, so one process reuses one set of exporters."""

    traces: SignalSettings
    metrics: SignalSettings
    logs: SignalSettings
    resource: tuple[tuple[str, str], ...] = ()
    temporality: str = "delta"
    log_user_prompts: bool = False
    log_tool_details: bool = False
    service_name: str = "catui"

    def signal(self, name: str) -> SignalSettings:
        return {"traces": self.traces, "metrics": self.metrics, "logs": self.logs}[name]

    @property
    def any_exporter(self) -> bool:
        return any(self.signal(name).exporters for name in SIGNALS)


def otel_settings(env: Mapping[str, str]) -> OtelSettings:
    """The exporter settings of a run whose telemetry is on (see the module docstring)."""
    signals = {name: _signal(name, env) for name in SIGNALS}
    temporality = (env.get("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE") or "delta").strip().lower()
    if temporality not in TEMPORALITIES:
        raise ConfigurationError(
            f"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE={temporality!r} is not supported; "
            f"use one of: {', '.join(TEMPORALITIES)}")
    resource = _pairs("OTEL_RESOURCE_ATTRIBUTES", env.get("OTEL_RESOURCE_ATTRIBUTES", ""))
    service = (env.get("OTEL_SERVICE_NAME") or dict(resource).get("service.name") or "catui").strip()
    return OtelSettings(
        traces=signals["traces"], metrics=signals["metrics"], logs=signals["logs"], resource=resource,
        temporality=temporality, log_user_prompts=is_true(env.get("OTEL_LOG_USER_PROMPTS")),
        log_tool_details=is_true(env.get("OTEL_LOG_TOOL_DETAILS")), service_name=service,
    )


def _signal(name: str, env: Mapping[str, str]) -> SignalSettings:
    upper = name.upper()
    exporter_var = f"OTEL_{upper}_EXPORTER"
    exporters: list[str] = []
    for item in (env.get(exporter_var) or "none").split(","):
        item = item.strip().lower()
        if not item or item == "none":
            continue
        if item not in EXPORTERS:
            raise ConfigurationError(f"{exporter_var}={env.get(exporter_var)!r}: {item!r} is not an exporter catui "
                                     f"has; use {', '.join(EXPORTERS)} (comma-separated)")
        if item not in exporters:
            exporters.append(item)
    protocol_var = f"OTEL_EXPORTER_OTLP_{upper}_PROTOCOL"
    protocol_name = protocol_var if env.get(protocol_var) else "OTEL_EXPORTER_OTLP_PROTOCOL"
    protocol = (env.get(protocol_name) or DEFAULT_PROTOCOL).strip().lower()
    if protocol not in PROTOCOLS:
        raise ConfigurationError(f"{protocol_name}={protocol!r} is not supported; use one of: {', '.join(PROTOCOLS)}")
    specific = (env.get(f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT") or "").strip()
    if specific:
        endpoint = specific  # a per-signal endpoint is used as it is, as the OTLP specification says
    else:
        base = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINTS[protocol]).strip().rstrip("/")
        endpoint = base + HTTP_PATHS[name] if protocol == "http/protobuf" else base
    if "otlp" in exporters and not endpoint.startswith(("http://", "https://")):
        which = f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT" if specific else "OTEL_EXPORTER_OTLP_ENDPOINT"
        raise ConfigurationError(f"{which}={endpoint!r} is not a URL; give one such as http://localhost:4318")
    headers = dict(_pairs("OTEL_EXPORTER_OTLP_HEADERS", env.get("OTEL_EXPORTER_OTLP_HEADERS", "")))
    headers.update(_pairs(f"OTEL_EXPORTER_OTLP_{upper}_HEADERS", env.get(f"OTEL_EXPORTER_OTLP_{upper}_HEADERS", "")))
    return SignalSettings(signal=name, exporters=tuple(exporters), protocol=protocol, endpoint=endpoint,
                          headers=tuple(headers.items()), interval_ms=_interval(name, env))


def _interval(name: str, env: Mapping[str, str]) -> int:
    var = INTERVAL_ENV[name]
    raw = (env.get(var) or "").strip()
    if not raw:
        return DEFAULT_INTERVALS_MS[name]
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigurationError(f"{var}={raw!r} is not a number of milliseconds; give a positive integer "
                                 f"(default {DEFAULT_INTERVALS_MS[name]})")
    return value


def _pairs(var: str, text: str) -> tuple[tuple[str, str], ...]:
    """``key=value,key2=value2`` (values percent-decoded), as the OTLP exporter specification writes them."""
    out: list[tuple[str, str]] = []
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigurationError(f"{var}: {item.strip()!r} is not key=value; write {var}=key1=value1,key2=value2")
        out.append((unquote(key.strip()), unquote(value.strip())))
    return tuple(out)
