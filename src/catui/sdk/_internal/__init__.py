"""The SDK's machinery, not public API: what :class:`catui.sdk.client.CatuiClient` and ``query()`` run on.

The driver (one object per client: the app, its turns and the message queue), the client's control
requests, the conversion of session events to SDK messages, prompt input and start-up checks. Modules here
may import :mod:`catui.app` and everything below it, and the SDK's public modules; nothing outside
:mod:`catui.sdk` imports them.
"""
