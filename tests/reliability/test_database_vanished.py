"""The database host vanishes without a reset (a dead machine, a failover that leaves the old address silent, a
network partition): no packet comes back, so nothing tells the server the connection is gone. Requests waiting
on it fail within seconds, as a 503 to retry, instead of holding their threads for the ~15 minutes the kernel
retransmits for; and once the host is back, requests are answered again."""

from __future__ import annotations

import threading
import time

import httpx

from far_host import far_host
from fleetdesk.server.store import Store, StoreUnavailable
from postgres_cluster import running_cluster
from serve_process import serve_ready

WITHIN_S = 40
"""GONE_HOST's 10 s without an acknowledgement (or 10 s idle and a probe unanswered), then a new connection's 10 s
connect timeout, with room for a busy machine."""


def test_a_query_in_flight_when_the_host_vanishes_fails_within_seconds() -> None:
    with far_host() as host, running_cluster(host.address, host.netns) as cluster:
        store = Store(cluster.fresh_database())
        try:
            store.migrate()
            outcome: list[BaseException | None] = []
            connected, sent = threading.Event(), threading.Event()

            def query() -> None:
                conn = store.connection()
                conn.execute("SELECT 1")  # this thread's connection, open before the link is cut
                connected.set()
                try:
                    sent.set()
                    conn.execute("SELECT pg_sleep(3)")
                    outcome.append(None)
                except StoreUnavailable as error:
                    outcome.append(error)

            waiting = threading.Thread(target=query, daemon=True)
            waiting.start()
            assert connected.wait(30)
            sent.wait()
            time.sleep(
                0.5
            )  # the query is acknowledged; the reply is 2.5 s away when the link is cut
            with host.cut_off():
                began = time.monotonic()
                waiting.join(WITHIN_S + 30)
                took = time.monotonic() - began
                assert not waiting.is_alive(), "the query still waits on a host that is gone"
                assert isinstance(outcome[0], StoreUnavailable), outcome
                assert took < WITHIN_S, took
            assert store.connection().execute("SELECT 1").fetchone()[0] == 1  # back
        finally:
            store.close()


def test_a_request_while_the_host_is_gone_is_a_503_within_seconds_and_answered_once_it_is_back() -> (
    None
):
    with far_host() as host, running_cluster(host.address, host.netns) as cluster:
        server, token = serve_ready(cluster.fresh_database())
        try:
            with httpx.Client(
                base_url=server.url,
                headers={"Authorization": f"Bearer {token}"},
                timeout=WITHIN_S + 60,
            ) as client:
                assert client.get("/v1/fleet/summary").status_code == 200
                with host.cut_off():
                    began = time.monotonic()
                    answer = client.get("/v1/fleet/summary")
                    took = time.monotonic() - began
                assert answer.status_code == 503, answer.text
                assert answer.headers["Retry-After"]
                assert took < WITHIN_S, took
                assert client.get("/v1/fleet/summary").status_code == 200
        finally:
            server.stop()
