"""The OpenTelemetry SDK providers and exporters for :class:`~catui.telemetry.otel_config.OtelSettings`.

Imported only when telemetry is on (``catui.telemetry.switch``): this is where
the SDK comes in. The providers are catui's own, not the global ones, so
several apps in one process (the SDK, tests) never fight over them. Console
exporters write to stderr: stdout carries print mode's answer and stream-json.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, ConsoleLogRecordExporter
from opentelemetry.sdk.metrics import (
    Counter,
    Histogram,
    MeterProvider,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    ConsoleMetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

from catui import __version__
from catui.telemetry.otel_config import OtelSettings, SignalSettings

QUEUE_SIZE = 16384
"""Spans (and events) held for export. The SDK's 2048 drops records when a hundred agents start at once
and the exporter is slower than they are; 16384 small records are a few MB at most."""


@dataclass
class Providers:
    """The three providers (each None when its signal exports nowhere)."""

    tracer: TracerProvider | None
    meter: MeterProvider | None
    logger: LoggerProvider | None

    def flush(self, timeout_ms: int = 5000) -> None:
        for provider in (self.tracer, self.meter, self.logger):
            if provider is not None:
                provider.force_flush(timeout_ms)

    def shutdown(self) -> None:
        for provider in (self.tracer, self.meter, self.logger):
            if provider is not None:
                provider.shutdown()


def build_resource(settings: OtelSettings) -> Resource:
    """``service.name`` / ``service.version`` (catui's) and ``process.pid`` (a Ray worker's records are told
    from the caller's by it), then ``OTEL_RESOURCE_ATTRIBUTES`` over them."""
    attributes: dict[str, Any] = {"service.name": settings.service_name, "service.version": __version__,
                                  "process.pid": os.getpid()}
    attributes.update({k: v for k, v in settings.resource if k != "service.name"})
    return Resource.create(attributes)


def build_providers(settings: OtelSettings) -> Providers:
    resource = build_resource(settings)
    return Providers(tracer=_tracer_provider(settings.traces, resource),
                     meter=_meter_provider(settings.metrics, resource, settings.temporality),
                     logger=_logger_provider(settings.logs, resource))


def _tracer_provider(signal: SignalSettings, resource: Resource) -> TracerProvider | None:
    if not signal.exporters:
        return None
    provider = TracerProvider(resource=resource)
    for name in signal.exporters:
        exporter: Any = ConsoleSpanExporter(out=sys.stderr) if name == "console" else _otlp(signal, "trace")
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=signal.interval_ms,
                                                       max_queue_size=QUEUE_SIZE))
    return provider


def _meter_provider(signal: SignalSettings, resource: Resource, temporality: str) -> MeterProvider | None:
    if not signal.exporters:
        return None
    chosen = AggregationTemporality.DELTA if temporality == "delta" else AggregationTemporality.CUMULATIVE
    # Counters report per interval under "delta" (Claude Code's default); gauges are always cumulative.
    preferred: dict[type, AggregationTemporality] = {Counter: chosen, UpDownCounter: AggregationTemporality.CUMULATIVE, Histogram: chosen,
                 ObservableCounter: chosen, ObservableUpDownCounter: AggregationTemporality.CUMULATIVE,
                 ObservableGauge: AggregationTemporality.CUMULATIVE}
    readers: list[MetricReader] = []
    for name in signal.exporters:
        if name == "console":
            exporter: Any = ConsoleMetricExporter(out=sys.stderr, preferred_temporality=preferred)
        else:
            exporter = _otlp(signal, "metric", preferred_temporality=preferred)
        readers.append(PeriodicExportingMetricReader(exporter, export_interval_millis=signal.interval_ms))
    return MeterProvider(resource=resource, metric_readers=readers)


def _logger_provider(signal: SignalSettings, resource: Resource) -> LoggerProvider | None:
    if not signal.exporters:
        return None
    provider = LoggerProvider(resource=resource)
    for name in signal.exporters:
        exporter: Any = ConsoleLogRecordExporter(out=sys.stderr) if name == "console" else _otlp(signal, "log")
        provider.add_log_record_processor(BatchLogRecordProcessor(exporter, schedule_delay_millis=signal.interval_ms,
                                                                  max_queue_size=QUEUE_SIZE))
    return provider


def _otlp(signal: SignalSettings, kind: str, **extra: Any) -> Any:
    """The OTLP exporter of one signal over HTTP/protobuf or gRPC (each imported only when chosen)."""
    headers = dict(signal.headers)
    if signal.protocol == "grpc":
        parts = urlsplit(signal.endpoint)
        target = parts.netloc or signal.endpoint
        insecure = parts.scheme != "https"
        if kind == "trace":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans

            return GrpcSpans(endpoint=target, insecure=insecure, headers=headers)
        if kind == "metric":
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                OTLPMetricExporter as GrpcMetrics,
            )

            return GrpcMetrics(endpoint=target, insecure=insecure, headers=headers, **extra)
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs

        return GrpcLogs(endpoint=target, insecure=insecure, headers=headers)
    if kind == "trace":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans

        return HttpSpans(endpoint=signal.endpoint, headers=headers)
    if kind == "metric":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetrics

        return HttpMetrics(endpoint=signal.endpoint, headers=headers, **extra)
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs

    return HttpLogs(endpoint=signal.endpoint, headers=headers)
