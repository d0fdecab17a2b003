"""One MCP server connection, run by the official ``mcp`` SDK in a task of its own.

The SDK's transports and sessions are anyio context managers that must be
entered and left by the same task, so each connection lives in one asyncio
task: it connects, lists the tools, reports ``connected``, then waits until
it is told to stop and leaves its contexts in order (the SDK closes stdin,
waits, and kills a stdio server's process group). Tool calls from other tasks
go through the open ``ClientSession``.

``import mcp`` is slow (about half a second), so it happens here, in the
connection task, and only when a server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any, Literal

from catui.mcp.config import McpServerConfig, SdkTransport

Status = Literal["pending", "connected", "failed"]
STDERR_TAIL_CHARS = 2000


class McpCallError(Exception):
    """A tool call could not be completed; the message is written for the model and the user."""


class McpConnection:
    """The state and session of one server: ``status`` is pending, connected or failed (``error`` says why)."""

    def __init__(
        self, config: McpServerConfig, *, cwd: Path, env: Mapping[str, str] | None, connect_timeout_s: float,
        sdk_transport: SdkTransport | None = None,
    ) -> None:
        self.config = config
        self._sdk_transport = sdk_transport
        self.name = config.name
        self.status: Status = "pending"
        self.error: str | None = None
        self.tools: list[Any] = []
        self.server_info: Any = None
        self.instructions: str | None = None
        self.has_resources = False
        """Whether the server declared the resources capability at initialisation."""
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._connect_timeout_s = connect_timeout_s
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._stop = asyncio.Event()
        self._stderr: IO[bytes] | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting in the background (needs a running event loop). Idempotent."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"catui-mcp-{self.name}")

    async def wait_settled(self) -> None:
        """Until the connection is no longer pending."""
        await self._settled.wait()

    @property
    def settled(self) -> bool:
        return self._settled.is_set()

    async def aclose(self, timeout_s: float = 10.0) -> None:
        """Disconnect and stop the server; bounded, and safe to call twice."""
        self._stop.set()
        task = self._task
        if task is None:
            self._close_stderr()
            return
        if not task.done() and not self.settled:
            task.cancel()  # still connecting: nothing to finish, and a hung start must not hold up the exit
        if not task.done():
            done, _ = await asyncio.wait({task}, timeout=timeout_s)
            if not done:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        with contextlib.suppress(BaseException):
            task.result()
        self._close_stderr()

    async def _run(self) -> None:
        try:
            async with asyncio.timeout(self._connect_timeout_s) as deadline:
                async with contextlib.AsyncExitStack() as stack:
                    # lazy, like every import of the SDK here: `mcp` costs ~0.5 s to import, paid only once a
                    # configured server starts connecting
                    from mcp import ClientSession
                    from mcp.types import Implementation

                    read, write = await stack.enter_async_context(self._transport())
                    session = await stack.enter_async_context(
                        ClientSession(read, write, client_info=Implementation(name="catui", version=_version()))
                    )
                    initialized = await session.initialize()
                    self.server_info = getattr(initialized, "server_info", None)
                    instructions = getattr(initialized, "instructions", None)
                    self.instructions = instructions if isinstance(instructions, str) else None
                    capabilities = getattr(initialized, "capabilities", None)
                    self.has_resources = getattr(capabilities, "resources", None) is not None
                    self.tools = await _list_all_tools(session)
                    deadline.reschedule(None)
                    self._session = session
                    self.status = "connected"
                    self._settled.set()
                    await self._stop.wait()
                    self._session = None
        except TimeoutError:
            self._fail(f"did not connect within {self._connect_timeout_s:g} s (MCP_TIMEOUT sets the limit in ms)")
        except asyncio.CancelledError:
            self._fail("closed before it connected" if self._stop.is_set() else "the connection was cancelled")
            raise
        except ImportError as exc:  # a broken install: `mcp` is one of catui's dependencies
            self._fail(f"the MCP client needs the `mcp` package ({exc}); install it with `pip install 'mcp>=1.0'` "
                       "or reinstall catui")
        except BaseException as exc:  # the SDK raises many kinds (OSError, MCPError, groups); all mean "failed"
            self._fail(describe_exception(exc))
        finally:
            self._session = None
            if self.status == "connected" and not self._stop.is_set():
                self._fail("the server closed the connection")
            self._settled.set()

    def _transport(self) -> Any:
        config = self.config
        if config.transport == "sdk":
            if self._sdk_transport is None:
                raise McpCallError(
                    "it is an in-process server (type \"sdk\") of a program driving catui; it can only be "
                    "reached when that program runs catui with --input-format stream-json"
                )
            return self._sdk_transport(config.name)
        if config.transport == "stdio":
            from mcp import StdioServerParameters, stdio_client  # lazy: the optional, slow SDK (see _run)

            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  # lives as long as the connection
            env = dict(self._env if self._env is not None else os.environ)
            env.update(config.env)
            params = StdioServerParameters(command=config.command, args=list(config.args), env=env, cwd=self._cwd)
            return stdio_client(params, errlog=self._stderr)  # type: ignore[arg-type]  # any file with fileno() works
        if config.transport == "sse":
            from mcp.client.sse import sse_client  # lazy: the optional, slow SDK (see _run)

            return sse_client(config.url, headers=dict(config.headers), timeout=30.0)
        return _streamable_http(config.url, dict(config.headers))

    def _fail(self, reason: str) -> None:
        lines = self.stderr_tail(600).splitlines()[-6:]
        tail = " | ".join(line.strip() for line in lines if line.strip())
        self.status = "failed"
        self.error = f"{reason} (its stderr ends: {tail})" if tail else reason
        self._settled.set()

    def stderr_tail(self, limit: int = STDERR_TAIL_CHARS) -> str:
        """The end of what a stdio server wrote on stderr (read without moving the shared file offset)."""
        handle = self._stderr
        if handle is None or handle.closed:
            return ""
        try:
            fd = handle.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - limit * 4)
            data = os.pread(fd, size - start, start)
        except OSError:
            return ""
        text = data.decode("utf-8", errors="replace").strip()
        return text[-limit:]

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()

    # -- calls ----------------------------------------------------------------------------------

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any], *, abort: asyncio.Event | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """Run one tool on the server; returns the SDK's CallToolResult. Raises McpCallError."""
        session = self._session
        if session is None or self.status != "connected":
            raise McpCallError(f"MCP server '{self.name}' is not connected: {self.error or self.status}")
        call = asyncio.ensure_future(session.call_tool(tool_name, arguments, read_timeout_seconds=timeout_s))
        waiters: set[asyncio.Future[Any]] = {call}
        stopper = asyncio.ensure_future(abort.wait()) if abort is not None else None
        if stopper is not None:
            waiters.add(stopper)
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if stopper is not None:
                stopper.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        if call.cancelled():
            raise McpCallError(f"Interrupted: the call to '{tool_name}' on MCP server '{self.name}' was stopped")
        exc = call.exception()
        if exc is None:
            return call.result()
        if _is_connection_closed(exc):
            self._fail("the server stopped (connection closed)")
            raise McpCallError(
                f"MCP server '{self.name}' stopped while running tool '{tool_name}': {self.error}"
            ) from None
        raise McpCallError(f"MCP server '{self.name}' failed to run tool '{tool_name}': {describe_exception(exc)}")


    async def list_resources(self) -> list[Any]:
        """The server's resources (the SDK's ``Resource`` objects, every page); [] when it offers none."""
        session = self._connected_session()
        if not self.has_resources:
            return []
        from mcp.types import PaginatedRequestParams  # lazy: the optional, slow SDK (see _run)

        resources: list[Any] = []
        cursor: str | None = None
        try:
            for _page in range(1000):  # a server that keeps returning cursors must not hang the session
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                result = await session.list_resources(params=params)
                resources.extend(result.resources)
                cursor = result.next_cursor
                if not cursor:
                    break
        except Exception as exc:  # the SDK raises MCPError, OSError, groups: all mean the listing failed
            raise McpCallError(
                f"MCP server '{self.name}' failed to list its resources: {describe_exception(exc)}"
            ) from None
        return resources

    async def read_resource(self, uri: str) -> Any:
        """Read one resource; returns the SDK's ReadResourceResult. Raises McpCallError."""
        session = self._connected_session()
        try:
            return await session.read_resource(uri)
        except Exception as exc:  # as in list_resources
            raise McpCallError(
                f"MCP server '{self.name}' failed to read resource {uri}: {describe_exception(exc)}"
            ) from None

    def _connected_session(self) -> Any:
        session = self._session
        if session is None or self.status != "connected":
            raise McpCallError(f"MCP server '{self.name}' is not connected: {self.error or self.status}")
        return session


@contextlib.asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str]) -> Any:
    # lazy: the optional, slow SDK (see _run), and httpx2 (~80 ms), which catui's own HTTP client avoids
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


async def _list_all_tools(session: Any) -> list[Any]:
    from mcp.types import PaginatedRequestParams  # lazy: the optional, slow SDK (see McpConnection._run)

    tools: list[Any] = []
    cursor: str | None = None
    for _page in range(1000):  # a server that keeps returning cursors must not hang the session
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await session.list_tools(params=params)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor:
            break
    return tools


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for inner in exc.exceptions:
            out.extend(_leaves(inner))
        return out
    return [exc]


def _is_connection_closed(exc: BaseException) -> bool:
    # lazy: the optional, slow SDK (see McpConnection._run); this runs only after a connection failed
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    for leaf in _leaves(exc):
        if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
            return True
        if isinstance(leaf, (BrokenPipeError, ConnectionError, EOFError)):
            return True
        if type(leaf).__name__ in ("ClosedResourceError", "BrokenResourceError", "EndOfStream"):
            return True
    return False


def describe_exception(exc: BaseException) -> str:
    """A one-line reason from whatever the SDK raised (exception groups are unwrapped)."""
    leaves = [e for e in _leaves(exc) if not isinstance(e, asyncio.CancelledError)] or _leaves(exc)
    leaf = leaves[0]
    if isinstance(leaf, FileNotFoundError):
        return f"cannot start the server: command not found ({leaf.filename or leaf})"
    if isinstance(leaf, PermissionError):
        return f"cannot start the server: permission denied ({leaf.filename or leaf})"
    if _is_connection_closed(leaf):
        return "the server closed the connection (did it exit?)"
    text = str(leaf).strip() or type(leaf).__name__
    name = type(leaf).__name__
    if name == "ConnectError" or name.endswith("ConnectError"):
        return f"cannot reach the server: {text}"
    if name == "HTTPStatusError":
        return f"the server answered with an HTTP error: {text}"
    return f"{name}: {text}" if name not in text else text


def _version() -> str:
    try:
        return version("catui")
    except Exception:
        return "0"
