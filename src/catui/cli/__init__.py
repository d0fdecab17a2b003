"""The ``catui`` command, a front end over :mod:`catui.app`: ``main`` (the click group), ``run`` (print mode),
and the packages :mod:`.commands` (subcommands), :mod:`.tui` (the interactive terminal) and :mod:`.stream`
(the stream-json protocol). It never imports :mod:`catui.sdk`."""
