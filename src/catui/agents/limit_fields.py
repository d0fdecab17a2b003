"""Reading catui's own definition fields: durations (``timeout``, ``stallTimeout``) and ``outputSchema``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object) -> float | None:
    """Seconds for ``90``, ``90s``, ``10m``, ``1h``, ``500ms`` (a bare number is seconds); None when not a duration.

    Zero and negative durations are not durations: a limit of nothing would stop every child at once.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        match = _DURATION_RE.match(value)
        if match is None:
            return None
        seconds = float(match.group(1)) * _UNIT_SECONDS[(match.group(2) or "s").lower()]
    else:
        return None
    return seconds if seconds > 0 else None


def load_output_schema(value: object, *, base_dir: str | None, where: str) -> dict[str, Any]:
    """The JSON Schema of an ``outputSchema`` value: an inline object, or a ``.json`` file's path.

    A relative path is read from ``base_dir`` (the folder of the definition). Raises
    ConfigurationError naming ``where`` (the field, or the definition file) and the schema file.
    """
    source = where
    if isinstance(value, str):
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = Path(base_dir or ".") / path
        source = f"{where}: schema file {path}"
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigurationError(f"{source} does not exist; give a path relative to the definition") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"{source} cannot be read: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{source} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"{source} must be a JSON Schema object (or the path of a .json file holding one), "
            f"not {type(value).__name__}"
        )
    check_schema(value, source)
    return value


def check_schema(schema: dict[str, Any], source: str) -> None:
    """Raise ConfigurationError when ``schema`` is not a valid JSON Schema (or does not describe an object)."""
    # jsonschema is imported only when an agent has a schema: `catui --help` and `agents list` stay fast.
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigurationError(f"{source} is not a valid JSON Schema: {exc.message}") from None
    kind = schema.get("type")
    if kind is not None and kind != "object":
        raise ConfigurationError(
            f"{source} must describe an object (\"type\": \"object\"), because tool inputs are objects; "
            f"wrap the value in a property"
        )
