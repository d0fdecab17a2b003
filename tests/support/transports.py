"""Run provider tests on both HTTP transports of :mod:`catui.models.http_api.post`.

Import the fixture into a test module to run each of its tests twice, once
through the lean asyncio-streams client and once through httpx2::

    from tests.support.transports import http_transport as http_transport  # noqa: F401

A module that names it only as an autouse fixture gets every test doubled;
a test that takes ``http_transport`` as an argument can also read which one runs.

Providers read the transport from the environment they are built with, so a
provider built with an explicit ``env`` must carry the choice in it:
``env={**transport_env(), ...}``. The fixture also sets ``CATUI_HTTP_CLIENT``
in the process environment, for providers built without one.
"""

from __future__ import annotations

import os

import pytest

TRANSPORTS = ("lean", "httpx")
_selected = {"CATUI_HTTP_CLIENT": "lean"}


def transport_env() -> dict[str, str]:
    """The variables that select the transport of the running test (``CATUI_HTTP_CLIENT``)."""
    return dict(_selected)


@pytest.fixture(autouse=True, params=TRANSPORTS)
def http_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Select each transport in turn, with no proxy variables around."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CATUI_HTTP_CLIENT", request.param)
    monkeypatch.setitem(_selected, "CATUI_HTTP_CLIENT", str(request.param))
    return str(request.param)
