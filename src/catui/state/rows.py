"""Rows of the state database as plain dicts: JSON columns encoded on the way in, decoded on the way out."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from catui.state.connection import StateError


def storable(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``values`` as SQLite can store them: a text with a lone surrogate (a model's JSON ``\\ud800`` escape, an
    undecodable byte of a file name) cannot be encoded as UTF-8, so each such character becomes U+FFFD
    instead of failing the write (the object in memory keeps its text)."""
    return tuple(_storable_text(v) if isinstance(v, str) else v for v in values)


def _storable_text(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def encode_json(value: Any, column: str) -> str | None:
    """A value for a JSON column (strings and None as they are)."""
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise StateError(f"state.db: column {column!r} needs JSON-serialisable data: {exc}") from exc


def decode_row(row: sqlite3.Row | None) -> dict[str, Any] | None:
    """A row as a dict: ``meta`` decoded (``{}`` when missing or damaged), ``hook_based`` a bool."""
    if row is None:
        return None
    data = dict(row)
    raw = data.get("meta")
    if isinstance(raw, str):
        try:
            data["meta"] = json.loads(raw)
        except ValueError:
            data["meta"] = {}
    elif raw is None and "meta" in data:
        data["meta"] = {}
    if "hook_based" in data:
        data["hook_based"] = bool(data["hook_based"])
    return data


def decode_row_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """A worktree row returned by a write as a dict (``meta`` decoded, ``hook_based`` a bool)."""
    data = dict(row)
    data["hook_based"] = bool(data.get("hook_based"))
    raw = data.get("meta")
    data["meta"] = json.loads(raw) if isinstance(raw, str) else {}
    return data
