"""Whole catui sessions in the background, and sessions that find and message each other (issue 31).

- :mod:`~catui.bgsessions.registry`: one small JSON file per session under ``<catui home>/bg/<id>/``;
- :mod:`~catui.bgsessions.inbox`: messages to a session, on disk before the sender hears they were delivered;
- :mod:`~catui.bgsessions.launch`: start, stop, remove and respawn detached sessions;
- :mod:`~catui.bgsessions.worker`: the detached process that runs one session;
- :mod:`~catui.bgsessions.cli`: ``catui --bg``, ``catui sessions|logs|stop|rm|respawn|attach``.
"""
