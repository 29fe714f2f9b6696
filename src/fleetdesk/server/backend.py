"""The backend's parts wired together: store, clock, fleet config, registry, event notifier, adapters."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fleetdesk.domain.model_type import FunnelStage
from fleetdesk.domain.registry import Registry
from fleetdesk.domain.stability import Health
from fleetdesk.server import slo_board
from fleetdesk.server.clock import Clock
from fleetdesk.server.events import EventNotifier
from fleetdesk.server.metrics_source import MetricsSource, StoreMetricsSource
from fleetdesk.server.paging import PagingTarget, StorePagingTarget
from fleetdesk.server.storage import StorageWatch
from fleetdesk.server.store import (
    AlreadySeeded,
    Connection,
    FleetConfig,
    SeedProgress,
    Store,
    buckets,
    idempotency_keys,
    registry_log,
)

log = logging.getLogger("fleetdesk.server")

REQUEST_THREADS = 40
"""Requests served at once: the worker threads of anyio's default thread limiter (one connection each)."""

MAX_ADVANCE_SLOTS = 48
"""Beyond this many closed slots since the last count (a long outage), recount from scratch."""


@dataclass
class Backend:
    store: Store
    clock: Clock
    config: FleetConfig
    registry: Registry
    paging: PagingTarget
    metrics: MetricsSource
    demo: bool = False
    model_keys: dict[str, int] = field(default_factory=dict)
    notifier: EventNotifier = field(default_factory=EventNotifier)
    closing: threading.Event = field(default_factory=threading.Event)
    _refreshed_slot: int = -1
    _refresh_lock: threading.Lock = field(default_factory=threading.Lock)
    _counts: dict[str, slo_board.Counts] | None = None
    _counts_windows: slo_board.Windows | None = None
    _latest: dict[str, Health] = field(default_factory=dict)
    _logged: int = 0
    """How far the ingest log was when our counts were taken: the buckets logged after it are not in them."""
    seeded: bool = False
    """True when this open created the database from a fleet (False: an existing one was reused)."""
    evaluated_at: datetime | None = None
    """When every model's SLO state was last brought up to date (stored states may be older but still hold)."""
    leading: bool = False
    """This process closed slots at its last chance to (always, on a store only it serves)."""
    storage: StorageWatch | None = None
    """Whether the database's disk takes writes (None: not watched)."""
    registry_version: int = 0
    """The registry version ``registry`` is (see store.registry_log)."""
    registry_memo: dict[str, Any] = field(default_factory=dict)
    """Values derived from ``registry`` and ``config`` alone, per model (views.summary's registry part): a
    listing of the fleet need not decode every type string again. Emptied when they change."""
    type_memo: dict[str, tuple[str, str, FunnelStage]] = field(default_factory=dict)
    """Each type string's (app, surface, funnel stage) by ``config``'s vocabulary: the models of a type share
    it, so a first listing decodes a few hundred types, not 50,000 (it was half of building the rows).
    Emptied with ``registry_memo``."""
    _registry_stale: threading.Event = field(default_factory=threading.Event)
    _commit_hooks: threading.local = field(default_factory=threading.local)
    """Another replica committed something: its registry version may have moved (see sync_registry)."""

    @classmethod
    def open(
        cls,
        db_path: Path | str,
        fleet: str | None,
        clock: Clock,
        *,
        demo: bool = False,
        paging: PagingTarget | None = None,
        metrics: MetricsSource | None = None,
        progress: SeedProgress | None = None,
        say: Callable[[str], None] | None = None,
    ) -> Backend:
        """Open (migrating) the database; seed it from ``fleet`` when it is new (``say`` hears what is being
        done, ``progress`` how far)."""
        say = say or (lambda _: None)
        store = Store(db_path)
        store.migrate()
        seeded = not store.is_seeded()
        if seeded:
            if fleet is None:
                raise ValueError(f"{store.where}: new database and no --fleet to seed it from")
            from fleetdesk.fleets import load_fleet

            began = time.monotonic()
            loaded = load_fleet(fleet, end_at=clock.now())
            say(
                f"{store.where} is new: seeding it from {fleet} ({len(loaded.registry.models):,} models,"
                f" {len(loaded.timeline):,} hours each)"
            )
            try:
                count = store.seed(
                    loaded,
                    progress,
                    # A seed of 50,000 models takes minutes: a replica started beside the one seeding would
                    # otherwise say nothing all that time.
                    waiting=lambda: say(
                        "another fleetdesk is writing to it (seeding it); waiting for it"
                    ),
                )
            except AlreadySeeded:
                # Replicas started together on a new database all find it unseeded; the one that took the
                # write lock first seeded it, and the others serve what it seeded, as a later start would.
                say("another fleetdesk seeded it; serving what it seeded")
                seeded = False
            else:
                log.info("seeded %s from fleet %s: %d buckets", store.where, fleet, count)
                # Then the first SLO pass over all of it, which at 50,000 models takes seconds more.
                say(f"seeded it: {count:,} buckets in {time.monotonic() - began:.1f} s")
        config = store.fleet_config()
        backend = cls(
            store=store,
            clock=clock,
            config=config,
            registry=store.registry(config),
            paging=paging or StorePagingTarget(),
            metrics=metrics or StoreMetricsSource(store),
            demo=demo,
            model_keys=store.model_keys(),
            storage=StorageWatch(store.local_file) if store.local_file else None,
        )
        backend.seeded = seeded
        with store.read() as conn:
            latest = registry_log.latest_version(conn)
        backend.registry_version = 0 if latest is None else latest.version
        store.watch_commits(backend._other_commit)
        store.warm(REQUEST_THREADS)
        with backend.write() as conn:
            idempotency_keys.finish_interrupted(conn)
        backend.refresh_if_due()
        return backend

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction; its commit hooks run once it has committed, then event streams are woken."""
        if self.storage is not None:
            self.storage.check_writable()
        hooks: list[Callable[[], None]] = []
        self._commit_hooks.hooks = hooks
        try:
            with self.store.write() as conn:
                yield conn
        finally:
            self._commit_hooks.hooks = None
        for hook in hooks:
            hook()
        self.notifier.notify()

    def on_commit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when this thread's write transaction commits, before its events are streamed (so a
        console that reads them finds the server already serving what they announce); never on a rollback."""
        hooks: list[Callable[[], None]] | None = getattr(self._commit_hooks, "hooks", None)
        if hooks is None:
            raise RuntimeError("on_commit outside a write transaction")
        hooks.append(hook)

    def _other_commit(self) -> None:
        # Marked before the wake-up, so a console that reads the registry event and asks again finds this
        # replica's registry already due for a look.
        self._registry_stale.set()
        self.notifier.notify()  # other replicas' events reach our streams

    def adopt_registry(self, registry: Registry, version: int, config: FleetConfig) -> None:
        """Serve ``registry`` and ``config`` (its type records; committed as ``version``) from now on, with the
        model keys that go with them."""
        with self._refresh_lock:
            self.registry = registry
            self.config = config
            self.registry_version = version
            self.type_memo = {}  # last, like registry_memo
            self.registry_memo = {}  # last: see views._registry_part
            self.model_keys = self.store.model_keys()
            # Counts are per model: a created or retired model makes the held ones the wrong set.
            self._counts = None

    def sync_registry(self) -> None:
        """Follow a registry change another replica committed (cheap when none did: one flag)."""
        if not self._registry_stale.is_set():
            return
        self._registry_stale.clear()
        with self.store.read() as conn:
            latest = registry_log.latest_version(conn)
        if latest is not None and latest.version != self.registry_version:
            config = self.store.fleet_config()
            self.adopt_registry(self.store.registry(config), latest.version, config)

    def refresh_if_due(self, force: bool = False) -> bool:
        """Recompute every model's SLO state when a new bucket slot has begun (the leader replica only)."""
        self.sync_registry()  # the leader judges the models another replica registered, without a request here
        with self._refresh_lock:
            self.leading = self.store.lead()
            if not self.leading:
                return False
            now = self.clock.now()
            slot = slo_board.slot_index(now, self.config)
            if slot == self._refreshed_slot and not force:
                return False
            windows = slo_board.windows_at(now=now, config=self.config)
            held, held_at, held_latest, held_seq = (
                self._counts,
                self._counts_windows,
                self._latest,
                self._logged,
            )
            # The counting runs on a read snapshot so actions are not held up.
            with self.store.read() as conn:
                logged, forgotten = buckets.log_position(conn)
                advancing = (
                    held is not None
                    and held_at is not None
                    and not force
                    # Nothing stored since our counts were taken has been dropped from the log (by another
                    # replica's pass, while it led).
                    and forgotten <= held_seq
                    and 0 <= windows.now_s - held_at.now_s <= MAX_ADVANCE_SLOTS * windows.step
                )
                if advancing:
                    assert held is not None and held_at is not None
                    counts = {m: {span: list(v) for span, v in c.items()} for m, c in held.items()}
                    slo_board.add_arrivals(
                        counts, self.model_keys, held_at, buckets.logged_since(conn, held_seq)
                    )
                    slo_board.advance_counts(conn, self.model_keys, counts, held_at, windows)
                else:
                    counts = slo_board.scan_counts(conn, self.model_keys, windows)
                latest, waiting = slo_board.latest_state(
                    conn, self.model_keys, windows, list(self.model_keys)
                )
            # A model whose window counts and latest health did not move keeps its stored
            # state (still true now); usually most of the fleet, so most of the work is skipped.
            # One still awaiting its latest bucket keeps it too: its ingest judges it (see slo_board).
            before = held if advancing and held is not None else {}
            scope = [
                m
                for m in self.model_keys
                if m not in waiting
                and (m not in before or counts[m] != before[m] or latest[m] != held_latest.get(m))
            ]
            assessments = slo_board.assess_from(
                self.config, self.registry, now, windows, counts, latest, scope
            )
            with self.write() as conn:
                # A model whose bucket was stored after the snapshot (here, or on another replica) keeps the
                # newer state that ingest stored; the next pass counts the bucket in.
                later = {row[0] for row in buckets.logged_since(conn, logged)}
                fresh = [a for a in assessments if self.model_keys[a.model_id] not in later]
                slo_board.apply(conn, self.registry, fresh, now, self.config.bucket_seconds)
                buckets.forget_logged(conn, logged)
            self._counts, self._counts_windows, self._latest = counts, windows, latest
            self._logged = logged
            self.evaluated_at = now
            self._refreshed_slot = slot
            return True

    def mark_refreshed(self, now: datetime) -> None:
        """Record that derived state was recomputed at ``now`` by someone else (the clock route)."""
        self._refreshed_slot = slo_board.slot_index(now, self.config)
        self.evaluated_at = now
        self._counts = None  # stored states are now newer than our counts: recount next time

    def begin_shutdown(self) -> None:
        """End event streams so the server can stop promptly."""
        self.closing.set()
        self.notifier.notify()

    def close(self) -> None:
        self.store.close()
