"""An OpenTelemetry span per agent, nested under the parent's span, when ``opentelemetry`` is installed.

Without the package (or with it but no SDK configured) this costs nothing:
the API's default tracer makes non-recording spans.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

_tracer: Any = None
_checked = False
OTEL_EXPORT_VARIABLES = ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
"""Variables that say the user wants spans exported (the standard OpenTelemetry SDK configuration)."""


def _get_tracer() -> Any:
    global _tracer, _checked
    if not _checked:
        _checked = True
        try:
            # lazy: optional (spans only when installed), looked up once, when the first agent span starts
            from opentelemetry import trace
        except ImportError:
            _tracer = None
            if any(os.environ.get(name) for name in OTEL_EXPORT_VARIABLES):
                # the user asked for export: say once that nothing will be exported, and how to fix it
                logging.getLogger(__name__).warning(
                    "catui: %s is set but the `opentelemetry` package is not installed, so no agent spans are "
                    "exported; install it with `pip install opentelemetry-sdk opentelemetry-exporter-otlp`",
                    next(name for name in OTEL_EXPORT_VARIABLES if os.environ.get(name)))
        else:
            _tracer = trace.get_tracer("catui")
    return _tracer


@contextlib.contextmanager
def agent_span(name: str, attributes: Mapping[str, Any]) -> Iterator[Any]:
    """A span for one agent run; the current span (the parent agent's) becomes its parent.

    Yields the span (or None without opentelemetry); attributes whose values
    are None are left out, as OpenTelemetry requires.
    """
    tracer = _get_tracer()
    if tracer is None:
        yield None
        return
    clean = {k: v for k, v in attributes.items() if v is not None}
    with tracer.start_as_current_span(name, attributes=clean) as span:
        yield span


def set_span_attributes(span: Any, attributes: Mapping[str, Any]) -> None:
    """Add attributes to a span from :func:`agent_span` (no-op for None)."""
    if span is None:
        return
    for key, value in attributes.items():
        if value is not None:
            span.set_attribute(key, value)
