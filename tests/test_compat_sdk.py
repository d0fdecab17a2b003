"""The SDK's ``compat=`` option (catui.config.compat) against the loopback Anthropic server."""

from __future__ import annotations

from pathlib import Path

import pytest

import catui
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.sdk_backend import collect, isolated_sdk_home  # noqa: F401 - isolated_sdk_home is a fixture


@pytest.mark.usefixtures("isolated_sdk_home")
@pytest.mark.parametrize(("compat", "env", "expected"), [
    ("2.1.332", {}, "2.1.332"), (None, {}, "2.1.92"), ("2.1.92", {"CATUI_COMPAT": "2.1.332"}, "2.1.92"),
])
async def test_compat_option(tmp_path: Path, compat: str | None, env: dict[str, str], expected: str) -> None:
    with AnthropicTestServer({"turns": [{"content": [{"type": "text", "text": "hi"}], "repeat": True}]}) as server:
        options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", env={**server.env(), **env},
                                     compat=compat)
        messages = await collect("Hello", options)
        agent = next(t for t in server.bodies()[0]["tools"] if t["name"] == "Agent")
    init = messages[0]
    assert isinstance(init, catui.SystemMessage) and init.data["compat"] == expected
    assert ("effort" in agent["input_schema"]["properties"]) is (expected == "2.1.332")


@pytest.mark.usefixtures("isolated_sdk_home")
async def test_a_bad_compat_option_is_one_clear_error(tmp_path: Path) -> None:
    options = catui.CatuiOptions(cwd=tmp_path, model="claude-sonnet-4-6", compat="9.9")
    with pytest.raises(catui.CatuiError, match=r"CatuiOptions.compat='9\.9' is not a known compatibility profile"):
        await collect("Hello", options)
