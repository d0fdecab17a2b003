"""A real OTLP/HTTP receiver on 127.0.0.1: decodes ExportTrace/Metrics/LogsServiceRequest protobufs.

No OpenTelemetry Collector that receives OTLP is installable from the
registries this project reaches (PyPI, npm, Debian; see docs/decisions.md), so
the tests receive with the official
``opentelemetry-proto`` messages behind a plain HTTP server, as a collector's
``otlp`` receiver does over ``http/protobuf``: ``POST /v1/traces``,
``/v1/metrics``, ``/v1/logs``; answers an empty Export*ServiceResponse.

What arrives is kept flattened: :attr:`spans`, :attr:`points` (one per metric
data point) and :attr:`logs`, each a dict with its attributes and its resource's.
Standalone: ``python -m tests.support.otlp_receiver [--port N]`` prints what it receives.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

GUARD_S = 60.0  # a broken scenario fails here instead of hanging (not a timing assertion)


def any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    return getattr(value, kind)


def attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


class OtlpReceiver:
    """See the module docstring. ``headers`` keeps each request's headers (to check OTEL_EXPORTER_OTLP_HEADERS)."""

    def __init__(self, port: int = 0) -> None:
        self.spans: list[dict[str, Any]] = []
        self.points: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answer = receiver.receive(self.path, body, dict(self.headers.items()))
                if answer is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

        self._grpc: Any = None
        self.grpc_port: int | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._grpc is not None:
            self._grpc.stop(grace=None)

    def start_grpc(self) -> str:
        """Also receive OTLP over gRPC (the three collector services, grpcio); returns its ``http://`` URL."""
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        receiver = self

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                with receiver._lock:
                    receiver.headers.append(dict(context.invocation_metadata()))
                    receiver._traces(request)
                return ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                with receiver._lock:
                    receiver._metrics(request)
                return ExportMetricsServiceResponse()

        class Logs(logs_service_pb2_grpc.LogsServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                with receiver._lock:
                    receiver._logs(request)
                return ExportLogsServiceResponse()

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)
        self.grpc_port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self._grpc = server
        return f"http://127.0.0.1:{self.grpc_port}"

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def env(self, **extra: str) -> dict[str, str]:
        """Variables that send all three signals here over http/protobuf, exported quickly."""
        return {
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
            "OTEL_LOGS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.url, "OTEL_METRIC_EXPORT_INTERVAL": "500",
            "OTEL_LOGS_EXPORT_INTERVAL": "200", "OTEL_TRACES_EXPORT_INTERVAL": "200", **extra,
        }

    # -- decoding ------------------------------------------------------------------------------

    def receive(self, path: str, body: bytes, headers: dict[str, str]) -> bytes | None:
        path = path.split("?")[0]
        with self._lock:
            self.headers.append({k.lower(): v for k, v in headers.items()})
            if path == "/v1/traces":
                self._traces(ExportTraceServiceRequest.FromString(body))
                return ExportTraceServiceResponse().SerializeToString()
            if path == "/v1/metrics":
                self._metrics(ExportMetricsServiceRequest.FromString(body))
                return ExportMetricsServiceResponse().SerializeToString()
            if path == "/v1/logs":
                self._logs(ExportLogsServiceRequest.FromString(body))
                return ExportLogsServiceResponse().SerializeToString()
        return None

    def _traces(self, request: ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            resource = attributes(resource_spans.resource.attributes)
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    self.spans.append({
                        "name": span.name, "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex() or None,
                        "attributes": attributes(span.attributes), "status": span.status.code,
                        "resource": resource,
                    })

    def _metrics(self, request: ExportMetricsServiceRequest) -> None:
        for resource_metrics in request.resource_metrics:
            resource = attributes(resource_metrics.resource.attributes)
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    kind = metric.WhichOneof("data")
                    data = getattr(metric, kind) if kind else None
                    for point in getattr(data, "data_points", []):
                        value_kind = point.WhichOneof("value") if kind in ("sum", "gauge") else None
                        self.points.append({
                            "name": metric.name, "unit": metric.unit, "kind": kind,
                            "value": getattr(point, value_kind) if value_kind else None,
                            "attributes": attributes(point.attributes), "resource": resource,
                        })

    def _logs(self, request: ExportLogsServiceRequest) -> None:
        for resource_logs in request.resource_logs:
            resource = attributes(resource_logs.resource.attributes)
            for scope in resource_logs.scope_logs:
                for record in scope.log_records:
                    self.logs.append({
                        "body": any_value(record.body), "event_name": record.event_name,
                        "attributes": attributes(record.attributes), "trace_id": record.trace_id.hex() or None,
                        "span_id": record.span_id.hex() or None, "resource": resource,
                    })

    # -- reading -------------------------------------------------------------------------------

    def wait_for(self, ready: Callable[[OtlpReceiver], bool], what: str, guard_s: float = GUARD_S) -> None:
        """Until ``ready(self)``: the exporters send in the background, on their own schedule."""
        deadline = time.monotonic() + guard_s
        while True:
            with self._lock:
                if ready(self):
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"the OTLP receiver never got {what}: spans {self.span_names()}, "
                                     f"metrics {sorted({p['name'] for p in self.points})}, "
                                     f"events {sorted({str(r['body']) for r in self.logs})}")
            time.sleep(0.05)

    def span_names(self) -> list[str]:
        return [span["name"] for span in self.spans]

    def events(self, name: str) -> list[dict[str, Any]]:
        """The log events whose ``event.name`` is ``name``."""
        return [r for r in self.logs if r["attributes"].get("event.name") == name]

    def metric(self, name: str) -> list[dict[str, Any]]:
        return [p for p in self.points if p["name"] == name]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=4318)
    args = parser.parse_args(argv)
    with OtlpReceiver(args.port) as receiver:
        print(f"receiving OTLP/HTTP on {receiver.url}", flush=True)
        seen = {"spans": 0, "points": 0, "logs": 0}
        try:
            while True:
                time.sleep(1)
                for kind, count in seen.items():
                    items: list[dict[str, Any]] = getattr(receiver, kind)
                    for item in items[count:]:
                        print(kind, item, flush=True)
                    seen[kind] = len(items)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
