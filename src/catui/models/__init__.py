"""Model providers: the Anthropic Messages API, OpenAI-compatible Chat Completions, and a scripted replayer.

Every provider yields Anthropic stream events (``message_start``,
``content_block_start``, ``content_block_delta``, ``content_block_stop``,
``message_delta``, ``message_stop``) as dicts; :class:`MessageAccumulator`
builds the final assistant message from them.
"""
