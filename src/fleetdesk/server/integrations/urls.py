"""URLs of the systems fleetdesk talks to, as they may be shown to people."""

from __future__ import annotations

import httpx


def public_url(url: str) -> str:
    """The URL without credentials or query (which may carry secrets), for messages and logs."""
    return str(httpx.URL(url).copy_with(query=None, userinfo=b""))
