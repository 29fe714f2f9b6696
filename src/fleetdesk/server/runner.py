"""Running the app under uvicorn: on a bound socket, in the foreground or in a background thread."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from types import FrameType

import uvicorn

from fleetdesk.server.app import create_app
from fleetdesk.server.backend import Backend
from fleetdesk.server.limits import KEEP_ALIVE_SECONDS, MAX_HEAD_BYTES, HeadDeadlineProtocol
from fleetdesk.server.logs import log_config

GRACEFUL_SHUTDOWN_SECONDS = 3


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port), so the URL is known before serving."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets
    # whose proto says TCP, and without it every response waits ~40 ms on Nagle
    # + delayed ACK (uvicorn writes headers and body separately).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _Server(uvicorn.Server):
    """uvicorn that ends open event streams as soon as it is asked to stop (Ctrl-C, SIGTERM)."""

    def __init__(self, config: uvicorn.Config, backend: Backend) -> None:
        super().__init__(config)
        self.backend = backend

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.backend.begin_shutdown()
        super().handle_exit(sig, frame)


def make_server(backend: Backend, log_level: str = "warning") -> uvicorn.Server:
    # access_log off: request lines are noise here, and query strings must never reach logs.
    config = uvicorn.Config(
        create_app(backend),
        log_level=log_level,
        log_config=log_config(),
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        http=HeadDeadlineProtocol,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    return _Server(config, backend)


class BackgroundServer:
    """uvicorn in a daemon thread; ``stop()`` ends streams and waits for it."""

    def __init__(self, backend: Backend, sock: socket.socket) -> None:
        self.backend = backend
        self.url = url_of(sock)
        self._sock = sock
        self._server = make_server(
            backend
        )  # run in a thread: uvicorn then installs no signal handlers
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            name="fleetdesk-server",
            daemon=True,
        )

    def start(self, timeout: float = 30.0) -> None:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("fleetdesk server thread exited during start-up")
            if time.monotonic() > deadline:
                raise RuntimeError("fleetdesk server did not start in time")
            time.sleep(0.01)

    def stop(self, timeout: float = 10.0) -> None:
        self.backend.begin_shutdown()
        self._server.should_exit = True
        self._thread.join(timeout)
        self._sock.close()
        self.backend.close()
