"""The HTTP providers: Anthropic Messages and OpenAI-compatible Chat Completions, with what they share:
the streamed POST, its two transports (lean HTTP/1.1 on asyncio, httpx2 for proxies), SSE decoding,
retries and connection limits."""
