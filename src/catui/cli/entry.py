"""The ``catui`` script's entry point: the background-session commands a script runs often (``catui sessions``,
``catui logs ID``, ``catui stop ID``) and ``catui --help`` (catui.cli.stored_help) are answered without importing
click or the rest of the CLI; everything else goes to :func:`catui.cli.main.main`, with the methods of the
dataclasses it defines compiled once per machine (:mod:`catui.dataclass_code`)."""

from __future__ import annotations

import sys

from catui.cli.unicode_output import tolerate_non_unicode_output


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        from catui.cli.stored_help import answer_help

        if answer_help(args):
            return
    if args and args[0] in ("sessions", "logs", "stop"):
        from catui.bgsessions import quick

        tolerate_non_unicode_output()
        if quick.run(args):
            return
    from catui.dataclass_code import reused_dataclass_code

    with reused_dataclass_code():  # the CLI's dataclasses reuse their compiled methods (catui.dataclass_code)
        from catui.cli.main import main as full_main

        full_main(args)
