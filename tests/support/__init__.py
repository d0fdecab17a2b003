"""Test support: loopback servers that speak the model providers' wire protocols.

``AnthropicTestServer`` (Messages API + SSE) and ``OpenAITestServer`` (Chat
Completions streaming) answer from a :class:`catui.models.replay.scripted.ScriptEngine`
script, record every request, and inject faults on demand. Both run in a
background thread, so a subprocess (the real CLI) can talk to them too.
"""
