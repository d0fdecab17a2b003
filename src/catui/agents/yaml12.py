"""A PyYAML loader that reads plain scalars the way YAML 1.2 (Claude Code's ``yaml`` package) does.

PyYAML implements YAML 1.1, where ``on``/``yes``/``no``/``off`` are booleans,
``2024-01-01`` is a date and ``1:30`` is a base-60 number. Claude Code parses
frontmatter with a YAML 1.2 engine, where all of those are plain strings. An
agent whose ``description: yes`` became ``True`` would be dropped for having no
string description, so catui resolves scalars with the 1.2 core schema:
``null``/``~``/empty, ``true``/``false`` (three spellings each), decimal,
``0o`` octal and ``0x`` hex integers, floats with ``.inf``/``.nan``.

The C parser (libyaml) is used when available; it only tokenises, so the
resolver rules below apply either way.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_BaseLoader: type[yaml.SafeLoader]
try:
    _BaseLoader = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


class Yaml12Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """SafeLoader with YAML 1.2 core-schema implicit typing and no timestamps."""


# Start from an empty table: inheriting would keep the 1.1 rules.
Yaml12Loader.yaml_implicit_resolvers = {}

# (tag, pattern, possible first characters; "" is the empty scalar)
_CORE_RESOLVERS: list[tuple[str, str, list[str]]] = [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
]
for _tag, _pattern, _first in _CORE_RESOLVERS:
    Yaml12Loader.add_implicit_resolver(_tag, re.compile(_pattern), _first)
# PyYAML's '<<' merge key and '=' value key resolvers are YAML 1.1 only; leave them out.


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # YAML 1.2: a leading 0 is still decimal (PyYAML 1.1 reads octal)


def _construct_float(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    text = str(loader.construct_scalar(node)).lower()  # type: ignore[arg-type]
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """A mapping whose keys must be unique, as in Claude Code's parser (PyYAML keeps the last silently)."""
    seen: set[Any] = set()
    for key_node, _value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:  # an unhashable key; the safe constructor reports it
            continue
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, f"duplicate key '{key}'", key_node.start_mark
            )
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node, deep=True))


Yaml12Loader.add_constructor("tag:yaml.org,2002:map", _construct_unique_mapping)
Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def load_yaml12(text: str) -> Any:
    """Parse one YAML document with 1.2 scalar rules. Raises ``yaml.YAMLError`` on bad input."""
    return yaml.load(text, Loader=Yaml12Loader)
