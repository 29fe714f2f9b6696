"""PostgreSQL goes down under a running ``fleetdesk serve``, or drops every connection (a restart, a failover, an
idle timeout on a proxy): while it is down, requests are a 503 that says to retry; after, the requests are
answered, not failed one per connection the server had open, and a change retried with its key applies once;
a transaction the database dropped half way is not run again behind the client's back."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from fleetdesk.server.store import Store, StoreUnavailable
from postgres_cluster import Cluster, running_cluster
from serve_process import serve_ready

MODEL = "ig_feed_late-stage_mtml.v41"
THREADS = 12


def test_after_the_database_dropped_every_connection_the_next_requests_are_answered(
    postgres: Cluster,
) -> None:
    url = postgres.fresh_database()
    server, token = serve_ready(url)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=server.url, headers=headers, timeout=20) as client:
            # Many request threads, each with its connection open, as after a busy minute.
            with ThreadPoolExecutor(THREADS) as pool:
                warm = list(pool.map(lambda _: client.get("/v1/fleet/summary"), range(4 * THREADS)))
            assert {answer.status_code for answer in warm} == {200}
            assert postgres.drop_connections(url) > THREADS
            with ThreadPoolExecutor(THREADS) as pool:
                reads = list(
                    pool.map(lambda _: client.get("/v1/fleet/summary"), range(4 * THREADS))
                )
            assert [a.status_code for a in reads if a.status_code != 200] == []
            assert client.get("/readyz").status_code == 200
            postgres.drop_connections(url)
            key = uuid.uuid4().hex
            note = client.post(
                f"/v1/models/{MODEL}/actions/note",
                json={"text": "after the failover"},
                headers={"Idempotency-Key": key},
            )
            assert note.status_code == 200, note.text
            audit = client.get("/v1/audit").json()["items"]
            assert [record["idempotency_key"] for record in audit].count(key) == 1
    finally:
        server.stop()


def test_while_the_database_is_down_requests_say_retry_and_after_it_the_same_key_applies_once() -> (
    None
):
    with (
        running_cluster() as cluster
    ):  # its own: stopping the session's would stop every other test's
        url = cluster.fresh_database()
        server, token = serve_ready(url)
        key = uuid.uuid4().hex
        try:
            with httpx.Client(
                base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=20
            ) as client:

                def note() -> httpx.Response:
                    return client.post(
                        f"/v1/models/{MODEL}/actions/note",
                        json={"text": "while the database restarts"},
                        headers={"Idempotency-Key": key},
                    )

                with cluster.down():
                    read, write = client.get("/v1/fleet/summary"), note()
                    assert client.get("/healthz").status_code == 200  # the process is up
                    assert client.get("/readyz").status_code == 503
                for answer in (read, write):
                    assert answer.status_code == 503 and answer.headers["Retry-After"] == "2"
                    assert answer.json()["type"] == "urn:fleetdesk:problem:unavailable"
                assert read.json()["detail"] == "the database cannot be reached; retry shortly"
                assert write.json()["detail"] == (
                    "the database cannot be reached; retry shortly with the same Idempotency-Key"
                )
                assert note().status_code == 200
                assert note().status_code == 200  # replayed
                audit = client.get("/v1/audit").json()["items"]
                assert [record["idempotency_key"] for record in audit].count(key) == 1
                assert client.get("/readyz").status_code == 200
        finally:
            server.stop()


@pytest.mark.parametrize("kind", ["read", "write"])
def test_a_transaction_the_database_dropped_half_way_is_not_run_again(
    postgres: Cluster, kind: str
) -> None:
    url = postgres.fresh_database()
    store = Store(url)
    store.migrate()
    try:
        transaction = store.read() if kind == "read" else store.write()
        with pytest.raises(StoreUnavailable), transaction as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('half', 'way')"
                if kind == "write"
                else "SELECT 1"
            )
            postgres.drop_connections(url)
            conn.execute("SELECT count(*) FROM meta")
        assert (
            store.connection().execute("SELECT count(*) FROM meta WHERE key = 'half'").fetchone()[0]
            == 0
        )
    finally:
        store.close()


def test_the_leaders_connection_is_not_opened_again_behind_its_back(postgres: Cluster) -> None:
    """Its session holds the leader lock: a new connection would not, so lead() must see the drop and take
    the lock again (or find another replica holds it) rather than answer from a connection without it."""
    url = postgres.fresh_database()
    store, rival = Store(url), Store(url)
    store.migrate()
    try:
        assert store.lead()
        postgres.drop_connections(url)
        assert rival.lead()  # the lock went with the dropped session
        assert not store.lead()
    finally:
        rival.close()
        store.close()


def test_idle_connections_on_many_threads_each_run_their_next_read_and_write(
    postgres: Cluster,
) -> None:
    url = postgres.fresh_database()
    store = Store(url)
    store.migrate()
    connected, dropped = threading.Barrier(THREADS + 1), threading.Event()
    failures: list[BaseException] = []

    def work(number: int) -> None:
        try:
            store.ping()
            connected.wait(20)
            dropped.wait(20)
            store.ping()
            with store.write() as conn:
                conn.execute("INSERT INTO meta (key, value) VALUES (?, 'x')", (f"thread-{number}",))
            with store.read() as conn:
                conn.execute("SELECT count(*) FROM meta").fetchone()
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            failures.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    try:
        for thread in threads:
            thread.start()
        connected.wait(20)
        assert postgres.drop_connections(url) >= THREADS
        dropped.set()
        for thread in threads:
            thread.join(30)
        assert failures == []
        written = store.connection().execute("SELECT count(*) FROM meta WHERE key LIKE 'thread-%'")
        assert written.fetchone()[0] == THREADS
    finally:
        store.close()
