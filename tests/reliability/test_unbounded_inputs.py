"""Unbounded inputs are bounded: bodies, request heads, slow senders, answers, files, ids and numbers.

The server side runs as a real ``fleetdesk serve`` process (its memory is measured from /proc) or in-process
with its deadlines shortened; the client side runs the real commands as subprocesses against hostile servers
and hostile files, and measures their peak memory (VmHWM, through peak_rss.py).
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fleetdesk.server import limits
from fleetdesk.server.embedded import EmbeddedServer
from serve_process import serve_ready

MIB = 1024 * 1024
ATTACK_BYTES = 100 * MIB
# Every route that takes a body (ingest has the largest limit).
BODY_ROUTES = [
    ("POST", "/v1/metrics"),
    ("PUT", "/v1/clock"),
    ("POST", "/v1/models/ig_feed_late-stage_mtml.v41/actions/note"),
]


def _peak_rss(pid: int) -> int:
    """Bytes of the highest resident set the process has had (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _send_body(url: str, method: str, path: str, framing: str, total: int = ATTACK_BYTES) -> bytes:
    """Send ``total`` bytes without a token; stops sending once the server answers. Returns what it answered."""
    host, port = url.removeprefix("http://").split(":")
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    head += (
        f"Content-Length: {total}\r\n\r\n"
        if framing == "length"
        else "Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"[" * MIB
    piece = chunk if framing == "length" else b"%x\r\n%s\r\n" % (len(chunk), chunk)
    pending, pieces_left = memoryview(head.encode()), total // MIB
    answer = b""
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.setblocking(False)
        while not answer.endswith(b"}"):
            readable, writable, _ = select.select(
                [sock], [sock] if pending or pieces_left else [], [], 30
            )
            if not readable and not writable:
                break  # no answer in 30 s: the assertion on it says so
            if readable:
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:
                    break
                if not data:
                    break
                answer += data
                continue
            if not pending:
                pending, pieces_left = memoryview(piece), pieces_left - 1
            try:
                pending = pending[sock.send(pending[:65536]) :]
            except (BlockingIOError, InterruptedError):
                continue
            except (BrokenPipeError, ConnectionResetError):
                pending, pieces_left = memoryview(b""), 0
    return answer


def test_an_anonymous_100_mb_body_is_refused_while_read_and_the_server_stays_small(
    tmp_path: Path,
) -> None:
    server, _ = serve_ready(tmp_path / "fleetdesk.sqlite")
    try:
        assert server.process is not None
        before = _peak_rss(server.process.pid)
        for method, path in BODY_ROUTES:
            for framing in ("length", "chunked"):
                answer = _send_body(server.url, method, path, framing)
                assert answer.startswith(b"HTTP/1.1 413 "), (path, framing, answer[:300])
                assert b"content-type: application/problem+json" in answer.lower()
                assert b"urn:fleetdesk:problem:payload-too-large" in answer
        grown = _peak_rss(server.process.pid) - before
        print(
            f"server peak RSS {before / MIB:.0f} MB before, grew {grown / MIB:.1f} MB over 6 x 100 MB bodies"
        )
        assert grown < 48 * MIB, grown
        assert httpx.get(server.url + "/readyz", timeout=10).status_code == 200
    finally:
        server.stop()


@pytest.fixture
def quick_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "HEAD_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr(limits, "BODY_TIMEOUT_SECONDS", 1.0)


# Every way to hold a connection without finishing a request head: say nothing, a request line only, some
# headers, a byte at a time, and the same after a complete keep-alive request.
PARTIAL_HEADS = [
    b"",
    b"GET /v1/info HTTP/1.1\r\n",
    b"GET /v1/info HTTP/1.1\r\nHost: x\r\nX-Slow: 1",
    b"G",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/info HTTP/1.1\r\nHo",
]


def test_partial_request_heads_are_closed_by_the_deadline(
    quick_deadlines: None, server_factory: Callable[..., EmbeddedServer]
) -> None:
    server = server_factory()
    host, port = server.url.removeprefix("http://").split(":")
    sockets = []
    for index in range(400):
        sock = socket.create_connection((host, int(port)), timeout=10)
        sock.sendall(PARTIAL_HEADS[index % len(PARTIAL_HEADS)])
        sockets.append(sock)
    started = time.monotonic()
    assert (
        httpx.get(server.url + "/healthz", timeout=10).status_code == 200
    )  # still serving meanwhile
    open_ones = set(range(len(sockets)))
    deadline = started + limits.HEAD_TIMEOUT_SECONDS + 10
    while open_ones and time.monotonic() < deadline:
        for index in list(open_ones):
            sockets[index].settimeout(0.01)
            try:
                data = sockets[index].recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                data = b""
            if data.startswith(b"HTTP/1.1 200"):
                continue  # the keep-alive one's first answer; its second head is still partial
            assert data == b"", data[:200]
            open_ones.discard(index)
    took = time.monotonic() - started
    for sock in sockets:
        sock.close()
    assert not open_ones, f"{len(open_ones)} partial-head connections still open after {took:.1f} s"
    print(
        f"400 partial-head connections closed {took:.1f} s after they were opened "
        f"(deadline {limits.HEAD_TIMEOUT_SECONDS:g} s)"
    )


def test_a_body_that_does_not_arrive_in_time_is_a_408(
    quick_deadlines: None, server: EmbeddedServer
) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=15) as sock:
        sock.sendall(
            f"POST /v1/metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.admin_token}\r\n"
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"buckets"'.encode()
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:300]
    assert b"urn:fleetdesk:problem:request-timeout" in answer


# Routes answered without reading their body (no route, no token, a GET): uvicorn drops the rest unread, so only
# the head deadline can end a body trickled after the answer.
UNREAD_BODIES = [
    ("GET", "/healthz", b"200"),
    ("GET", "/metrics", b"200"),
    ("GET", "/v1/info", b"401"),
    ("DELETE", "/v1/audit", b"405"),
    ("GET", "/no/such/route", b"404"),
]


@pytest.mark.parametrize("framing", ["chunked", "length"])
def test_a_body_trickled_after_the_answer_is_cut_off_by_the_deadline(
    quick_deadlines: None, server: EmbeddedServer, framing: str
) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    sockets: list[socket.socket] = []
    for method, path, _ in UNREAD_BODIES:
        sock = socket.create_connection((host, int(port)), timeout=10)
        framed = (
            "Transfer-Encoding: chunked\r\n\r\n1\r\n["
            if framing == "chunked"
            else f"Content-Length: {limits.MAX_BODY_BYTES - 1}\r\n\r\n["
        )
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\n{framed}".encode())
        sockets.append(sock)
    for sock, (_, path, status) in zip(sockets, UNREAD_BODIES, strict=True):
        assert sock.recv(65536).startswith(b"HTTP/1.1 " + status), path
    started = time.monotonic()
    open_ones = dict(zip(range(len(sockets)), UNREAD_BODIES, strict=True))
    while open_ones and time.monotonic() < started + limits.HEAD_TIMEOUT_SECONDS + 10:
        for index in list(open_ones):
            try:  # a byte every ~50 ms: never idle, never done
                sockets[index].sendall(b"\r\n1\r\n[" if framing == "chunked" else b"[")
                readable, _, _ = select.select([sockets[index]], [], [], 0.01)
                closed = bool(readable) and sockets[index].recv(65536) == b""
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            if closed:
                del open_ones[index]
        time.sleep(0.05)
    took = time.monotonic() - started
    for sock in sockets:
        sock.close()
    assert not open_ones, f"still open after {took:.1f} s: {list(open_ones.values())}"
    assert took < limits.HEAD_TIMEOUT_SECONDS + 2


# --- ids and numbers on every route ----------------------------------------------------------------------------

FUZZ = settings(
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
HUGE_INTEGERS = st.one_of(
    st.sampled_from([2**63, -(2**63) - 1, 2**64, -(2**64), 10**30, -1, -(10**30)]),
    st.integers(min_value=2**63, max_value=2**200),
    st.integers(max_value=-1),
)


def test_every_numeric_and_id_parameter_is_bounded(shared_server: EmbeddedServer) -> None:
    document = httpx.get(shared_server.url + "/v1/openapi.json", timeout=10).json()
    auth = {"Authorization": f"Bearer {shared_server.admin_token}"}
    members: list[tuple[str, str, str, str]] = []  # (path template, location, name, type)
    for template, operations in document["paths"].items():
        if "get" not in operations or template == "/v1/events":
            continue
        for parameter in operations["get"].get("parameters", []):
            kind = parameter["schema"].get("type") or next(
                (
                    item.get("type")
                    for item in parameter["schema"].get("anyOf", [])
                    if item.get("type") != "null"
                ),
                "",
            )
            if kind in ("integer", "string") and parameter["in"] in ("path", "query"):
                members.append((template, parameter["in"], parameter["name"], kind))
    assert len(members) >= 15, members

    @given(st.sampled_from(members), HUGE_INTEGERS, st.integers(min_value=257, max_value=20_000))
    @settings(FUZZ, max_examples=80)
    def request(member: tuple[str, str, str, str], number: int, length: int) -> None:
        template, where, name, kind = member
        value = str(number) if kind == "integer" else "x" * length
        path = template.replace("{model_id}", "ig_feed_late-stage_mtml.v41").replace(
            "{incident_id}", "1"
        )
        params = {}
        if where == "path":
            path = template.replace("{" + name + "}", value).replace("{model_id}", "m")
        else:
            params[name] = value
        response = httpx.get(shared_server.url + path, params=params, headers=auth, timeout=30)
        assert response.status_code in (404, 414, 422, 431), (
            path,
            name,
            response.status_code,
            response.text[:300],
        )
        if response.status_code in (404, 422):
            assert response.headers["content-type"].startswith("application/problem+json")

    request()


# --- the client side: answers and files ------------------------------------------------------------------------


class HostileServer:
    """Answers every request with ``size`` bytes of JSON-looking garbage, declared or not (HTTP/1.0 framing)."""

    def __init__(self, size: int, declare: bool) -> None:
        self.size, self.declare = size, declare
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            length = f"Content-Length: {self.size}\r\n" if self.declare else "Connection: close\r\n"
            conn.sendall(
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{length}\r\n".encode()
            )
            block = b"[" * MIB
            for _ in range(self.size // MIB):
                conn.sendall(block)

    def close(self) -> None:
        self._listener.close()


# A bad body's answer is bounded too: every invalid input of a 16 MiB batch listed (or echoed in full) made the
# answer several times the request, past what the client reads.
BAD_BUCKET_FIELDS = {
    "model_id": st.sampled_from(["x" * 257, "y" * 300_000, "", 7]),
    "start": st.sampled_from(["bad", "0001-01-01T00:00:00Z", 0, "2026-11-30T10:30:00Z"]),
    "weight": st.sampled_from(["bad", -1.0, 1e300, [1]]),
    "surplus": st.just("field nobody knows"),
}


def test_the_answer_to_a_bad_body_is_bounded(shared_server: EmbeddedServer) -> None:
    auth = {"Authorization": f"Bearer {shared_server.admin_token}"}
    good = {"model_id": "ig_feed_late-stage_mtml.v41", "start": "2026-11-30T10:00:00Z"}

    @given(
        st.dictionaries(st.sampled_from(list(BAD_BUCKET_FIELDS)), st.none(), min_size=1),
        st.integers(min_value=1, max_value=50_000),
        st.data(),
    )
    @settings(FUZZ, max_examples=12)
    def bad_batch(fields: dict[str, None], count: int, data: st.DataObject) -> None:
        bucket = {**good, **{name: data.draw(BAD_BUCKET_FIELDS[name]) for name in fields}}
        copies = count if len(str(bucket)) < 1000 else min(count, 50)  # 50 of 300 KB: under 16 MiB
        body = {"buckets": [bucket] * copies}
        answer = httpx.post(
            shared_server.url + "/v1/metrics",
            json=body,
            headers={**auth, "Idempotency-Key": os.urandom(8).hex()},
            timeout=60,
        )
        assert answer.status_code in (413, 422), answer.text[:300]
        assert len(answer.content) < 64 * 1024, (len(answer.content), answer.text[:300])
        if answer.status_code == 422:
            assert 0 < len(answer.json()["errors"]) <= 100

    bad_batch()
    for field in ("expected_serving_model_id", "acknowledged_target"):
        answer = httpx.post(
            shared_server.url + "/v1/models/ig_feed_late-stage_mtml.v41/actions/rollback",
            json={field: "z" * 200_000, "reason": "r"},
            headers={**auth, "Idempotency-Key": os.urandom(8).hex()},
            timeout=60,
        )
        assert answer.status_code == 422 and len(answer.content) < 4096, answer.text[:300]


PEAK_RSS = Path(__file__).with_name("peak_rss.py")


def _run_measured(
    args: list[str], env: dict[str, str], timeout: float = 60
) -> tuple[int, str, str, int]:
    """Run a fleetdesk command; (exit code, stdout, stderr, its peak RSS in bytes; 0 when it never exited)."""
    with tempfile.NamedTemporaryFile(prefix="peak-rss-") as peak_file:
        try:
            done = subprocess.run(
                [sys.executable, str(PEAK_RSS), *args],
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=timeout,
                env={**os.environ, **env, "PEAK_RSS_FILE": peak_file.name},
            )
        except (
            subprocess.TimeoutExpired
        ) as expired:  # a hang fails the test's assertions, not the suite
            return -9, str(expired.stdout or ""), str(expired.stderr or ""), 0
        written = Path(peak_file.name).read_text()
    return done.returncode, done.stdout, done.stderr, int(written) if written else 0


@pytest.mark.parametrize("declare", [True, False], ids=["declared", "undeclared"])
def test_a_200_mb_answer_is_refused_and_the_client_stays_small(
    tmp_path: Path, declare: bool
) -> None:
    hostile = HostileServer(200 * MIB, declare)
    try:
        code, out, err, peak = _run_measured(
            [
                "snapshot",
                "export",
                "--server",
                hostile.url,
                "--model",
                "m",
                "--out",
                str(tmp_path),
                "--no-screenshot",
            ],
            {"FLEETDESK_TOKEN": "fdk_" + "x" * 40, "XDG_CONFIG_HOME": str(tmp_path)},
        )
    finally:
        hostile.close()
    assert code == 1 and out == "", (code, out, err)
    assert err.count("\n") == 1 and "the answer is larger than 32 MiB" in err, err
    print(
        f"snapshot export against a 200 MB answer ({'declared' if declare else 'undeclared'}): "
        f"peak RSS {peak / MIB:.0f} MB"
    )
    assert 0 < peak < 200 * MIB, peak


def _fifo(path: Path) -> Path:
    os.mkfifo(path, 0o600)
    return path


def _socket_file(path: Path) -> Path:
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    return path


def _symlink(target: str) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        path.symlink_to(target)
        return path

    return make


def _sparse(size: int) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        with path.open("wb") as handle:
            handle.truncate(size)
        path.chmod(0o600)  # private, like a token file: what is refused is its size
        return path

    return make


def _directory(path: Path) -> Path:
    path.mkdir()
    return path


# Every way a named file can be something else than a small regular file.
NOT_REGULAR = {
    "fifo": _fifo,
    "symlink-to-dev-zero": _symlink("/dev/zero"),
    "dev-zero": lambda p: Path("/dev/zero"),
    "directory": _directory,
    "socket": _socket_file,
    "sparse-1-GiB": _sparse(1 << 30),
    "symlink-to-fifo": lambda p: _symlink(str(_fifo(p.with_name(p.name + ".fifo"))))(p),
}


def _load_config_settings(path: Path) -> object:
    import fleetdesk.settings.console as config
    from fleetdesk.settings import locations

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(locations, "config_file", lambda: path)
        return config.load_settings()


# Every place that reads a file a person named, called as its command calls it.
def _sites() -> dict[str, Callable[[Path], object]]:
    from fleetdesk.client import load_token
    from fleetdesk.drills.scenario import load_scenario
    from fleetdesk.drills.script import load_script
    from fleetdesk.fleets import load_fleet
    from fleetdesk.server.integrations.options import read_secret_file
    from fleetdesk.snapshot.redact import configured_patterns
    from fleetdesk.snapshot.reopen import load_snapshot

    return {
        "snapshot": load_snapshot,
        "fleet file": lambda p: load_fleet(str(p)),
        "scenario": load_scenario,
        "key script": load_script,
        "token file": lambda p: load_token(token_file=p),
        "snapshot secret patterns": configured_patterns,
        "console settings": _load_config_settings,
        "webhook secret": read_secret_file,
    }


SITES = [
    "snapshot",
    "fleet file",
    "scenario",
    "key script",
    "token file",
    "snapshot secret patterns",
    "console settings",
    "webhook secret",
]


@pytest.mark.parametrize("kind", NOT_REGULAR)
@pytest.mark.parametrize("site", SITES)
def test_every_named_file_is_read_only_when_regular_and_small(
    tmp_path: Path, site: str, kind: str
) -> None:
    target = NOT_REGULAR[kind](tmp_path / "named")
    outcome: list[BaseException | object] = []
    reader = threading.Thread(
        target=lambda: outcome.append(_attempt(_sites()[site], target)), daemon=True
    )
    reader.start()
    reader.join(10)
    assert outcome, f"reading a {kind} as the {site} did not return within 10 s"
    error = outcome[0]
    assert isinstance(error, Exception), f"a {kind} was read as the {site}: {error!r}"[:300]
    # Refused for what it is, or (a secret's file) for being readable by others, checked before any read.
    assert any(words in str(error) for words in ("regular file", "larger than", "readable by")), (
        error
    )


def _attempt(read: Callable[[Path], object], path: Path) -> BaseException | object:
    try:
        return read(path)
    except Exception as error:  # noqa: BLE001 - the test looks at which error, and its words
        return error


# Every command that reads a named file, with where the name goes: a FIFO (the one that hung) for each.
FILE_COMMANDS = {
    "open": lambda f: ["open", str(f)],
    "open --summary": lambda f: ["open", str(f), "--summary"],
    "fleet validate": lambda f: ["fleet", "validate", str(f)],
    "explain --fleet": lambda f: ["explain", "m", "--fleet", str(f)],
    "rules --fleet": lambda f: ["rules", "recording", "--fleet", str(f)],
    "serve --fleet": lambda f: [
        "serve",
        "--fleet",
        str(f),
        "--db",
        str(f.with_name("new.sqlite")),
        "--port",
        "0",
    ],
    "drill SCENARIO": lambda f: ["drill", str(f)],
    "drill --script": lambda f: ["drill", "stale-feed", "--headless", "--script", str(f)],
    "snapshot export --token-file": lambda f: [
        "snapshot",
        "export",
        "--server",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--token-file",
        str(f),
    ],
}


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        *((command, "fifo") for command in FILE_COMMANDS),
        *(("open", kind) for kind in NOT_REGULAR if kind != "fifo"),
    ],
)
def test_a_named_file_that_is_not_a_small_regular_file_is_refused_in_one_line(
    tmp_path: Path, command: str, kind: str
) -> None:
    target = NOT_REGULAR[kind](tmp_path / "named")
    started = time.monotonic()
    code, out, err, peak = _run_measured(
        FILE_COMMANDS[command](target), {"XDG_CONFIG_HOME": str(tmp_path)}, timeout=30
    )
    took = time.monotonic() - started
    assert code in (1, 2), (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "regular file" in err or "larger than" in err, err
    # Plain words, and the file named once.
    assert "[Errno" not in err and err.count(str(target)) == 1, err
    assert took < 20 and 0 < peak < 300 * MIB, (took, peak)


def test_a_10_mb_token_file_is_refused_unread(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_bytes(b"fdk_" + b"x" * (10 * MIB))
    token_file.chmod(0o600)
    code, out, err, peak = _run_measured(
        [
            "snapshot",
            "export",
            "--server",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--token-file",
            str(token_file),
        ],
        {"XDG_CONFIG_HOME": str(tmp_path)},
    )
    assert code == 1 and "is larger than 4 KiB" in err and err.count("\n") == 1, (code, out, err)
    assert "xxxx" not in err and 0 < peak < 150 * MIB, peak


@pytest.mark.parametrize("declare", [True, False], ids=["declared", "undeclared"])
def test_the_servers_own_calls_read_a_bounded_answer(declare: bool) -> None:
    """Prometheus and the paging targets are called by the server: a 200 MB answer there is refused too."""
    import resource
    from datetime import UTC, datetime

    from fleetdesk.server.integrations.answers import MAX_ANSWER_BYTES
    from fleetdesk.server.integrations.outbox import DeliveryFailed, post
    from fleetdesk.server.integrations.prometheus_api import PrometheusApi, PrometheusQueryError

    hostile = HostileServer(200 * MIB, declare)
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        prometheus = PrometheusApi(hostile.url)
        with pytest.raises(PrometheusQueryError) as refused:
            prometheus.query("up", datetime(2026, 11, 30, tzinfo=UTC))
        prometheus.close()
        assert "answered more than 32 MiB; is it Prometheus?" in refused.value.details.detail
        with httpx.Client(timeout=30) as http, pytest.raises(DeliveryFailed) as failed:
            post(http, hostile.url + "/hook", json={"page": 1})
        assert "answered more than 32 MiB" in str(failed.value)
    finally:
        hostile.close()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - peak_before
    assert grown < 3 * MAX_ANSWER_BYTES, grown  # each answer would be 200 MB read whole
