"""What every outbound paging target shares: the durable outbox, incident timeline entries, resolves.

A page is stored in the outbox (in the server's database) before the first
try. When that try fails the escalation still stands: ``deliver`` raises
``PagingError`` so the server writes the failure on the incident, and the
outbox keeps retrying with backoff; when a retry gets through, the incident
timeline says so. When an incident that paged through this target resolves,
a resolve notice goes out the same way (Alertmanager: ``endsAt``).
"""

from __future__ import annotations

import json
import logging
from abc import abstractmethod
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from fleetdesk.domain.registry import Model
from fleetdesk.domain.text import sanitize
from fleetdesk.server import incidents
from fleetdesk.server.integrations.outbox import Outbox, OutboxEntry, RetryBackoff
from fleetdesk.server.paging import PagingError, PagingTarget
from fleetdesk.wire import Page

if TYPE_CHECKING:
    from fleetdesk.server.backend import Backend

log = logging.getLogger("fleetdesk.server.integrations")


PAGE, RESOLVE = "page", "resolve"


class OutboundPagingTarget(PagingTarget):
    """A PagingTarget that sends over the network through a durable outbox; call ``attach`` once."""

    def __init__(
        self, server_url: str, backoff: RetryBackoff | None = None, sweep_interval: float = 2.0
    ) -> None:
        self.server_url = server_url
        """This fleetdesk server's URL, for the console command in pages."""
        self._backoff = backoff
        self._sweep_interval = sweep_interval
        self._backend: Backend | None = None
        self._outbox: Outbox | None = None

    @property
    @abstractmethod
    def where(self) -> str:
        """Where pages go, for people (no secrets), e.g. 'Alertmanager at http://…'."""

    @abstractmethod
    def page_payload(self, page: Page, model: Model, sent_at: datetime) -> Any:
        """The JSON-able body announcing ``page``."""

    @abstractmethod
    def resolve_payload(self, page_payload: Any, resolved_at: datetime) -> Any:
        """The JSON-able body withdrawing what ``page_payload`` announced."""

    @abstractmethod
    def send(self, entry: OutboxEntry) -> None:
        """One delivery try of ``entry.payload``; raises DeliveryFailed with a plain-words reason."""

    @property
    def outbox(self) -> Outbox:
        if self._outbox is None:
            raise RuntimeError(f"{type(self).__name__} is not attached to a backend")
        return self._outbox

    def attach(self, backend: Backend) -> None:
        """Use this backend's database for the outbox and its incidents; start retrying."""
        self._backend = backend
        self._outbox = Outbox(
            backend.store,
            self.name,
            self.send,
            self._backoff,
            sweep=self._send_resolves,
            sweep_interval=self._sweep_interval,
        )
        self._outbox.add_listener(self._record_outcome)
        self._outbox.start()

    def close(self) -> None:
        if self._outbox is not None:
            self._outbox.stop()

    def deliver(self, page: Page) -> None:
        backend = self._require_backend()
        model = backend.registry.get(page.model_id)
        entry = self.outbox.send(
            PAGE,
            page.model_id,
            page.incident_id,
            f"page to {page.team}",
            self.page_payload(page, model, datetime.now(UTC)),
        )
        assert entry is not None  # a page follows nothing up, so it is always stored
        if entry.delivered_at is None:
            raise PagingError(
                f"{self.where} did not take it ({entry.last_error}); "
                "it stays queued and is retried with backoff until it gets through"
            )

    def _require_backend(self) -> Backend:
        if self._backend is None:
            raise RuntimeError(f"{type(self).__name__} is not attached to a backend")
        return self._backend

    def _record_outcome(self, entry: OutboxEntry, error: str | None) -> None:
        # The first failure is written by the server (PagingError from deliver);
        # later failures only go to the log, so a long outage does not flood the
        # timeline; the eventual success is written here.
        if error is not None:
            log.warning(
                "%s to %s: try %d failed: %s", entry.description, self.where, entry.attempts, error
            )
            return
        if entry.incident_id is None or (entry.kind == PAGE and entry.attempts == 1):
            return
        backend = self._require_backend()
        if entry.kind == PAGE:
            text = f"{entry.description} via {self.name} delivered on try {entry.attempts}"
            kind = "page_delivered"
        else:
            text = f"{self.name}: {entry.description} delivered (the incident resolved)"
            kind = "page_resolved"
        at = backend.clock.now()
        with backend.write() as conn:
            timeline_entry = incidents.add_entry(
                conn, entry.incident_id, at, kind, entry.model_id, None, sanitize(text)
            )
            incidents.announce(conn, entry.incident_id, timeline_entry, at)

    def _send_resolves(self) -> None:
        """Withdraw the pages of incidents that resolved since (once per page)."""
        for page_id, incident_id, model_id, description, payload in self.outbox.unfollowed(PAGE):
            self.outbox.send(
                RESOLVE,
                model_id,
                incident_id,
                f"withdrawal of the {description}",
                self.resolve_payload(json.loads(payload), datetime.now(UTC)),
                about_id=page_id,
            )
