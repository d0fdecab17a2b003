"""Inside the sandbox: a loopback TCP port bridged to the proxy's unix socket, then the command.

Run by bwrap as ``python -I -S bridge.py SOCKET PORT FILTER COMMAND...`` (standard library only: it runs
isolated, with no site-packages). It listens on ``127.0.0.1:PORT`` in the sandbox's own network namespace, forks
a process that copies each accepted connection to and from SOCKET (the proxy outside, ``proxy.py``), and only
then executes COMMAND in its own place, so the port is ready before the command's first line runs. The bridge
ends with the sandbox: bwrap's pid namespace kills it when the command exits.

FILTER is the seccomp program (hex; ``-`` for none) that keeps the command from opening unix sockets
(``seccomp.py``). bwrap cannot load it for the whole sandbox here, since the bridge itself connects to SOCKET:
the bridge's process makes itself undumpable (the command, its parent, cannot trace it or read its memory),
and the command's process installs the filter before it executes COMMAND. Should that fail, the command does
not run.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

CHUNK = 64 * 1024


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _connect(client: socket.socket, socket_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
    back.start()
    _copy(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, socket_path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_connect, args=(client, socket_path), daemon=True).start()


def _prctl(*args: int | None) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(*args) != 0:
        raise OSError(ctypes.get_errno(), f"prctl{args[:1]}")


def _install_filter(program: bytes) -> None:
    """Load the seccomp ``program`` into this process (and whatever it executes and starts from now on)."""
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    _prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0)
    _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0)


def main(argv: list[str]) -> None:
    if len(argv) < 5:
        sys.exit("usage: bridge.py SOCKET PORT FILTER COMMAND...")
    socket_path, port, program, command = argv[1], int(argv[2]), argv[3], argv[4:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    if os.fork() == 0:
        # The bridge: no terminal, no output file held open, just the copying.
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        try:
            if program != "-":
                _prctl(_PR_SET_DUMPABLE, 0, None, 0, 0)
            _serve(listener, socket_path)
        finally:
            os._exit(0)
    listener.close()  # the command does not inherit the port (sockets are close-on-exec anyway)
    if program != "-":
        try:
            _install_filter(bytes.fromhex(program))
        except (OSError, ValueError, ImportError) as error:
            sys.exit(f"catui sandbox: cannot block unix sockets for this command ({error}); it was not run")
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv)
