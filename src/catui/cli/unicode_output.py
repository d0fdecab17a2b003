"""Printing text that is not valid Unicode without dying (both entry points use it)."""

from __future__ import annotations

import sys


def tolerate_non_unicode_output() -> None:
    """Text that is not valid Unicode (a non-UTF-8 file name, a lone surrogate in a prompt) is printed as a
    ``\\uXXXX`` escape instead of killing the process; inside a JSON string that escape reads back as the
    same text, so stream-json output stays exact."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a closed or replaced stream: nothing to protect
                pass
