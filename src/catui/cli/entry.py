"""The ``catui`` script's entry point: the background-session commands a script runs often (``catui sessions``,
``catui logs ID``, ``catui stop ID``) are answered without importing click or the rest of the CLI; everything else
goes to :func:`catui.cli.main.main`."""

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


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("sessions", "logs", "stop"):
        from catui.bgsessions import quick

        tolerate_non_unicode_output()
        if quick.run(args):
            return
    from catui.cli.main import main as full_main

    full_main(args)
