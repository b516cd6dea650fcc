"""A port on the host's loopback that leads to an address inside a network namespace.

kubesim's API server and the runnable pods it runs (AIPerf, the smoke test's client) live on the host's loopback;
the model servers run inside the cluster's network namespace on their pods' IPs (standins/model_servers.py). The
service proxy and the Service names a runnable pod uses reach a serving pod through one of these: each connection
is opened from a thread that entered the namespace (the socket stays there) and bytes are copied both ways."""

from __future__ import annotations

import logging
import socket
import threading

from .control_plane.netns import call_inside

log = logging.getLogger("kubesim.netns_forward")
CONNECT_TIMEOUT_S = 5.0


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until ``src`` ends, then end ``dst``'s writing half (the peer sees EOF)."""
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class NetnsForwarder:
    def __init__(self, netns_path: str, ip: str, port: int):
        self.netns_path, self.ip, self.target_port = netns_path, ip, port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name=f"forward-{ip}:{port}", daemon=True).start()

    def _connect(self) -> socket.socket:
        return call_inside(self.netns_path, socket.create_connection, (self.ip, self.target_port), CONNECT_TIMEOUT_S)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = self._connect()
        except OSError as exc:     # nothing listens there (yet): the client sees the connection end, as a refusal
            log.debug("forward to %s:%s: %s", self.ip, self.target_port, exc)
            client.close()
            return
        upstream.settimeout(None)
        back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        back.start()
        _pump(client, upstream)
        back.join()
        client.close()
        upstream.close()

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
