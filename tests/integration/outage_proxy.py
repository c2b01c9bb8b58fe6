"""A TCP proxy that can take a service away and bring it back on the same port.

moto keeps its objects in its own memory, so stopping the S3 server would lose the
warehouse; an outage is the proxy in front of it closing: open connections are cut and
new ones refused, until `start()` listens on the same port again.

    with OutageProxy(upstream_port) as proxy:   # clients use proxy.port
        proxy.stop(); ...; proxy.start()
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType

from postgres import free_port  # type: ignore[import-not-found]


class OutageProxy:
    def __init__(self, upstream_port: int, port: int | None = None) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.port = port or free_port()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def __enter__(self) -> OutageProxy:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Refuse new connections and cut every open one (an outage, not a slow server)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            try:  # wakes the thread blocked in accept(); close() alone leaves it bound
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        with self._lock:
            sockets, self._open = self._open, set()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by stop()
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:  # stopped meanwhile
                    client.close()
                    server.close()
                    return
                self._open |= {client, server}
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _passing(self, src: socket.socket, data: bytes) -> None:
        """Called with each chunk on its way through (a subclass counts requests)."""

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                self._passing(src, data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            with self._lock:
                self._open -= {src, dst}
