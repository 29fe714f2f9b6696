"""Where escalation pages go: a small adapter interface, and the default that keeps them in the store.

Contract for a PagingTarget (integrations such as Alertmanager or a webhook
live in fleetdesk.server.integrations and implement exactly this):

- ``name`` identifies the target in audit records and ``Page.delivered_via``.
- ``deliver(page)`` is called once per page, *after* the escalation committed
  (the page is already in the audit log and the ``pages`` table), from a
  worker thread. It should finish within a few seconds; it raises
  ``PagingError`` with a plain-words reason when the page did not get through,
  which the server records on the incident timeline. The escalation itself
  stays done: a retry with the same Idempotency-Key replays it, it does not
  page twice.
- It never sees tokens or other secrets of the caller.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from fleetdesk.wire import Page


class PagingError(RuntimeError):
    """A page that could not be delivered; the message says why, in plain words."""


class PagingTarget(ABC):
    """Delivers escalation pages to people."""

    name: str = "abstract"

    @abstractmethod
    def deliver(self, page: Page) -> None:
        """Send one page; raise PagingError when it did not get through."""


class StorePagingTarget(PagingTarget):
    """The default: the page recorded in the store (and shown on the incident timeline) is the delivery."""

    name = "fleetdesk"

    def deliver(self, page: Page) -> None:
        return None
