"""Inside the sandbox: a loopback TCP port bridged to the proxy's unix socket, then the command.

Run by bwrap as ``python -I -S bridge.py SOCKET PORT COMMAND...`` (standard library only: it runs isolated, with
no site-packages). It listens on ``127.0.0.1:PORT`` in the sandbox's own network namespace, forks a process
that copies each accepted connection to and from SOCKET (the proxy outside, ``proxy.py``), and only then
executes COMMAND in its own place, so the port is ready before the command's first line runs. The bridge
ends with the sandbox: bwrap's pid namespace kills it when the command exits.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

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


def main(argv: list[str]) -> None:
    if len(argv) < 4:
        sys.exit("usage: bridge.py SOCKET PORT COMMAND...")
    socket_path, port, command = argv[1], int(argv[2]), argv[3:]
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
            _serve(listener, socket_path)
        finally:
            os._exit(0)
    listener.close()  # the command does not inherit the port (sockets are close-on-exec anyway)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv)
