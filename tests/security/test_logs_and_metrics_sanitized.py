"""Data-borne text never reaches a log line or a /metrics label raw: every line of every server log record is
sanitized (tracebacks included), and label values are sanitized, then escaped per the text format."""

from __future__ import annotations

import logging
import re
import sqlite3
import unicodedata
import urllib.parse
from pathlib import Path

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetdesk.domain.text import sanitize
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.logs import SanitizingFormatter
from serve_process import serve_ready  # tests/ is on sys.path

from .hostile import HOSTILE_ID, hostile_fleet, leaks

UNSAFE = {"Cc", "Cf", "Cs", "Zl", "Zp"}
# A sample: name, labels whose values hold no raw quote, backslash or newline except as the format's escapes.
SAMPLE = re.compile(r'^[a-z_:]+(\{(?:[a-z_]+="(?:[^"\\\n]|\\[\\"n])*",?)*\})? \S+$')


def _unsafe(line: str) -> list[str]:
    return [char for char in line if unicodedata.category(char) in UNSAFE]


@settings(max_examples=300, deadline=None)
@given(message=st.text(), argument=st.text(), exception=st.text())
def test_every_line_of_every_record_is_sanitized(
    message: str, argument: str, exception: str
) -> None:
    formatter = SanitizingFormatter("%(levelprefix)s %(message)s", use_colors=False)
    try:
        raise ValueError(exception)
    except ValueError as error:
        record = logging.LogRecord(
            "fleetdesk.server",
            logging.ERROR,
            __file__,
            1,
            "busy on %s %s",
            (message, argument),
            (type(error), error, error.__traceback__),
        )
    text = formatter.format(record)
    for line in text.split("\n"):
        assert not _unsafe(line), (line, _unsafe(line))
    first, *traceback = text.split("\n")
    assert first.endswith(
        f" busy on {sanitize(message)} {sanitize(argument)}"
    )  # one line, escaped, not dropped
    assert traceback[0] == "Traceback (most recent call last):"
    assert traceback[-1] == sanitize(
        f"ValueError: {exception}" if exception else "ValueError"
    )  # one line too
    assert text.encode("utf-8")  # no lone surrogate left to crash a writer


def test_a_hostile_model_id_reaches_the_serve_log_and_metrics_only_escaped(tmp_path: Path) -> None:
    db = tmp_path / "fleetdesk.sqlite"
    server, token = serve_ready(db, "--fleet", str(hostile_fleet(tmp_path)))
    try:
        # A bucket row stored before sums were bounded: reading it logs a warning naming the model.
        foreign = sqlite3.connect(db)
        with foreign:
            changed = foreign.execute(
                "UPDATE buckets SET weight = 1e30 WHERE model_key = (SELECT key FROM models WHERE id = ?)"
                " AND start >= (SELECT max(start) - 86400 FROM buckets)",
                (HOSTILE_ID,),
            ).rowcount
        assert changed
        foreign.close()
        path = f"/v1/models/{urllib.parse.quote(HOSTILE_ID, safe='')}/stability"
        answer = httpx.get(
            server.url + path, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        assert answer.status_code == 200, answer.text
        metrics = httpx.get(server.url + "/metrics", timeout=30).content
    finally:
        server.stop()
    log = "".join(server.log)
    assert "left out the bucket of ig_feed_late-stage_mtml.zqhostile" in log, log
    assert leaks(log.encode("utf-8", "backslashreplace")) == []
    assert all(not _unsafe(line) for line in log.splitlines())
    assert leaks(metrics) == []
    samples = [line for line in metrics.decode().splitlines() if line and not line.startswith("#")]
    assert all(SAMPLE.match(line) for line in samples), [
        line for line in samples if not SAMPLE.match(line)
    ][:3]
    assert all(not _unsafe(line) for line in samples)
    assert "zqhostile" in metrics.decode()  # the series is there, under its sanitized id


METHOD_TOKENS = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&'*+-.^_`|~0123456789", min_size=1, max_size=20
)


def test_request_metrics_labels_are_bounded_whatever_the_client_sends(
    server: EmbeddedServer,
) -> None:
    """Each distinct label value is a series kept for the server's life: methods and paths a client makes up
    must not become label values, or an anonymous client grows /metrics (and memory) without end."""
    from fleetdesk.server.openapi import UNSECURED
    from fleetdesk.server.prom import KNOWN_METHODS

    sent: list[tuple[str, str]] = []

    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(
        method=st.one_of(st.sampled_from(sorted(KNOWN_METHODS)), METHOD_TOKENS),
        path=st.one_of(
            st.sampled_from(["/v1/info", "/healthz", "/v1/models/x", "/metrics"]),
            st.text(alphabet="abcxyz/%1b[]", min_size=1, max_size=30).map(lambda p: "/" + p),
        ),
    )
    def request(method: str, path: str) -> None:
        httpx.request(method, server.url + path, timeout=10)
        sent.append((method, path))

    request()
    samples = [
        line
        for line in httpx.get(server.url + "/metrics", timeout=10).text.splitlines()
        if line.startswith("fleetdesk_http_requests_total{")
    ]
    methods = set(re.findall(r'method="([^"]*)"', "\n".join(samples)))
    routes = set(re.findall(r'route="([^"]*)"', "\n".join(samples)))
    assert methods <= KNOWN_METHODS | {"other"}, methods
    documented = httpx.get(server.url + "/v1/openapi.json", timeout=10).json()["paths"]
    templates = set(documented) | UNSECURED | {"unmatched"}
    assert routes <= templates, routes - templates
    assert (
        len({method for method, _ in sent} - KNOWN_METHODS) > 10
    )  # the strategy did make methods up
