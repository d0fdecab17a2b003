"""The pure-Python search as a child process: ``python -m catui.tools.python_search_worker``.

It reads one JSON query on stdin (the fields of :class:`~catui.tools.search_engine.GrepQuery`) and writes
one JSON line per file with hits, in the order Grep shows them. Run by
:func:`catui.tools.search_engine.python_search_in_child`, which can kill it (see
:mod:`catui.tools.search_process` for why it is not a thread).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from catui.tools.search_engine import GrepQuery, SearchError, python_search


def main() -> int:
    raw = json.loads(sys.stdin.buffer.read())
    query = GrepQuery(
        pattern=raw["pattern"], root=Path(raw["root"]), mode=raw["mode"], globs=tuple(raw["globs"]),
        file_type=raw["file_type"], ignore_case=raw["ignore_case"], multiline=raw["multiline"],
        before=raw["before"], after=raw["after"], hidden=raw["hidden"],
    )
    out = sys.stdout
    try:
        hits = python_search(query)
    except SearchError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    for hit in hits:
        # ensure_ascii: a file name that is not UTF-8 (surrogateescape) travels as a \\udcXX escape.
        out.write(json.dumps({"path": hit.path, "count": hit.count, "lines": hit.lines}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
