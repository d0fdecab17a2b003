"""Strict validation of a JSON value against the official SDKs' TypedDict request types.

pydantic validates ``Iterable[...]`` fields lazily and allows unknown keys in
TypedDicts, so a request that the API would reject can pass it; this checker
walks the value eagerly, rejects unknown keys and names the path of the first
mismatch.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

import typing_extensions

_WRAPPERS = {"Required", "NotRequired", "ReadOnly", "Annotated"}


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or getattr(tp, "_name", None) or repr(tp)


def check(value: Any, tp: Any, path: str = "$") -> None:
    """Raise AssertionError naming the path when ``value`` does not fit ``tp``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Annotated, typing_extensions.Annotated) or _name(origin) in _WRAPPERS:
        check(value, args[0], path)
        return
    if tp in (Any, object) or tp is typing_extensions.Any:
        return
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in args:
            try:
                check(value, option, path)
                return
            except AssertionError as err:
                errors.append(str(err))
        raise AssertionError(f"{path}: {value!r:.80} fits none of {[_name(a) for a in args]}: {errors}")
    if origin in (typing.Literal, typing_extensions.Literal):
        assert value in args, f"{path}: {value!r} is not one of {args}"
        return
    if tp is type(None):
        assert value is None, f"{path}: expected null"
        return
    if typing_extensions.is_typeddict(tp):
        assert isinstance(value, dict), (
            f"{path}: expected an object for {_name(tp)}, got {type(value).__name__}"
        )
        hints = typing_extensions.get_type_hints(tp, include_extras=True)
        unknown = set(value) - set(hints)
        assert not unknown, f"{path}: unknown keys {sorted(unknown)} for {_name(tp)}"
        missing = set(tp.__required_keys__) - set(value)
        assert not missing, f"{path}: missing required keys {sorted(missing)} for {_name(tp)}"
        for key, item in value.items():
            check(item, hints[key], f"{path}.{key}")
        return
    if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        assert isinstance(value, dict), f"{path}: expected an object"
        for key, item in value.items():
            check(item, args[1] if len(args) > 1 else Any, f"{path}.{key}")
        return
    if (
        origin in (list, collections.abc.Iterable, collections.abc.Sequence)
        or _name(origin) == "SequenceNotStr"
    ):
        assert isinstance(value, list), f"{path}: expected an array, got {type(value).__name__}"
        for index, item in enumerate(value):
            check(item, args[0] if args else Any, f"{path}[{index}]")
        return
    if tp is float:
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{path}: expected a number"
        return
    if tp is int:
        assert isinstance(value, int) and not isinstance(value, bool), f"{path}: expected an integer"
        return
    if tp in (str, bool):
        assert isinstance(value, tp), f"{path}: expected {tp.__name__}, got {type(value).__name__}"
        return
    if tp in (dict, list):
        assert isinstance(value, tp), f"{path}: expected {tp.__name__}"
        return
    if isinstance(tp, type):
        assert isinstance(value, tp), f"{path}: expected {tp.__name__}"
        return
    raise AssertionError(f"{path}: the checker does not know the type {tp!r}")
