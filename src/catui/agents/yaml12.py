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

YAML 1.2 also requires the continuation lines of a quoted value or a flow
collection (``[a,\\n b]``) to be indented more than the block collection
holding it; PyYAML does not check that, Claude Code's parser does (it then
drops the whole frontmatter), so ``load_yaml12`` checks it and raises
``UnderIndentedLineError`` naming the line.
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


class UnderIndentedLineError(yaml.MarkedYAMLError):
    """A continuation line of a quoted value or flow collection is indented too little for YAML 1.2.

    ``context_mark`` is where the value starts, ``problem_mark`` the start of the offending line's
    text (lines counted in ``\\n`` breaks, as editors count them); ``kind`` names the value
    ("quoted value" or "flow collection"), ``required_indent`` the spaces the line needed.
    """

    def __init__(self, value_mark: yaml.Mark, line_mark: yaml.Mark, kind: str, required_indent: int) -> None:
        super().__init__(
            f"while scanning a {kind}",
            value_mark,
            f"this line continues a {kind} but is indented {line_mark.column} spaces, "
            f"fewer than the {required_indent} YAML 1.2 requires here",
            line_mark,
        )
        self.kind = kind
        self.required_indent = required_indent


def load_yaml12(text: str) -> Any:
    """Parse one YAML document with 1.2 scalar rules. Raises ``yaml.YAMLError`` on bad input."""
    loader = Yaml12Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_continuation_indents(text, node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_continuation_indents(text: str, root: yaml.Node) -> None:
    """Raise UnderIndentedLineError for a quoted value or flow collection whose later lines are too shallow.

    The rule is the one Claude Code's parser (the ``yaml`` npm package) applies: inside a block
    collection that starts at column c, every further line of such a value needs at least c + 1
    leading spaces; blank lines and, in a flow collection, comment lines are exempt, and the closing
    bracket of a flow collection may sit at column c. At the document's top level nothing is required.
    """
    # (node, spaces its continuation lines need), visited in document order so that a node reached
    # again through an alias (the same object) is checked where its anchor stands, and only there.
    pending: list[tuple[yaml.Node, int]] = [(root, 0)]
    seen: set[int] = set()
    while pending:
        node, required = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            # Plain and block scalars need no check here: PyYAML enforces their indentation itself.
            if node.style in ('"', "'") and required:
                _check_lines(text, node, required, "quoted value")
            continue
        if isinstance(node, yaml.CollectionNode) and node.flow_style:
            if required:
                _check_lines(text, node, required, "flow collection")
            continue  # everything inside a flow collection lies within the lines just checked
        inner = node.start_mark.column + 1
        children = [value for _key, value in node.value] if isinstance(node, yaml.MappingNode) else node.value
        pending.extend((child, inner) for child in reversed(children))


def _check_lines(text: str, node: yaml.Node, required: int, kind: str) -> None:
    start, end = node.start_mark.index, node.end_mark.index
    line_break = text.find("\n", start, end)
    while line_break >= 0:
        line_start = line_break + 1
        indent = 0
        while line_start + indent < end and text[line_start + indent] == " ":
            indent += 1
        first = text[line_start + indent : line_start + indent + 1]
        exempt = first in ("\n", "\r", "") or (
            kind == "flow collection"
            # a comment line, or the collection's own closing bracket one column to the left of its content
            and (first == "#" or (indent == required - 1 and line_start + indent == end - 1))
        )
        if indent < required and not exempt:
            line = text.count("\n", 0, line_start)
            line_mark = yaml.Mark("<frontmatter>", line_start + indent, line, indent, None, 0)
            value_line = text.count("\n", 0, start)
            value_mark = yaml.Mark("<frontmatter>", start, value_line, node.start_mark.column, None, 0)
            raise UnderIndentedLineError(value_mark, line_mark, kind, required)
        line_break = text.find("\n", line_start, end)
