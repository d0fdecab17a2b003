"""Generating ``input_schemas.json`` (:mod:`catui.tools.static_schemas`) from the tool input models.

    .venv/bin/python -m catui.tools.schema_store          # fails when the file is out of date
    .venv/bin/python -m catui.tools.schema_store --write  # rewrites it
"""

from __future__ import annotations

import argparse
import importlib
import json
from typing import Any

from catui.tools.base import ToolInput, generated_schema
from catui.tools.static_schemas import SCHEMA_MODULES, SCHEMAS_FILE, model_key


def generated_schemas() -> dict[str, dict[str, Any]]:
    """The schemas of every ``ToolInput`` model of :data:`SCHEMA_MODULES`, generated from the models now."""
    for name in SCHEMA_MODULES:
        importlib.import_module(name)
    found: dict[str, dict[str, Any]] = {}
    pending: list[type] = list(ToolInput.__subclasses__())
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__ in SCHEMA_MODULES:
            found[model_key(model)] = generated_schema(model)
    return dict(sorted(found.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description="Check or rewrite catui's stored tool input schemas.")
    parser.add_argument("--write", action="store_true", help=f"rewrite {SCHEMAS_FILE.name} from the models")
    options = parser.parse_args()
    text = json.dumps(generated_schemas(), indent=1, ensure_ascii=False) + "\n"
    if options.write:
        SCHEMAS_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMAS_FILE}")
    elif SCHEMAS_FILE.read_text(encoding="utf-8") != text:
        raise SystemExit(f"{SCHEMAS_FILE} is out of date: run python -m catui.tools.schema_store --write")


if __name__ == "__main__":
    main()
