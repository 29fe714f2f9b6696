"""Fetching everything a model view shows, in one go, before the view is drawn."""

from __future__ import annotations

import asyncio

from fleetdesk.client import FleetdeskError
from fleetdesk.console.host import ConsoleHost
from fleetdesk.console.messages import ModelLoaded
from fleetdesk.wire import Window


async def fetch_model_view(
    console: ConsoleHost, model_id: str, window: Window, holdout: bool = False
) -> ModelLoaded:
    """Detail, lineage and series (with the holdout's, when overlaid) fetched concurrently, then the open
    incident the model names."""
    client = console.client
    try:
        detail, lineage, series = await asyncio.gather(
            client.model(model_id),
            client.lineage(model_id),
            client.stability(model_id, window, holdout),
        )
        incident = (
            await client.incident(detail.open_incident_id) if detail.open_incident_id else None
        )
    except FleetdeskError:
        console.read_failed()
        raise
    return ModelLoaded(detail, lineage, series, incident)
