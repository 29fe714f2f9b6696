"""The model view says why a model pages (its tier's policy) and shows its type's record."""

from __future__ import annotations

import json
from pathlib import Path

from console_helpers import make_app, wait_for

from fleet_variants import small_variant
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.model.context import ModelContext
from fleetdesk.console.widgets.model.slo_panel import SloPanel

TAGGING = "ig_tagging_late-stage_dlrm.v6"
PAGING = "fb_feed_late-stage_dhen.v52"  # TIER0, NE regression: pages


async def _open(pilot, model_id: str) -> ModelScreen:  # type: ignore[no-untyped-def]
    screen = ModelScreen(model_id)
    await pilot.app.push_screen(screen)
    await wait_for(pilot, lambda: screen.detail is not None, f"{model_id} to load")
    return screen


async def test_the_slo_panel_says_why_a_tier0_model_pages(server) -> None:  # type: ignore[no-untyped-def]
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, PAGING)
        panel = screen.query_one(SloPanel).text.plain
        assert "why pages: TIER0 policy, page-fast" in panel


async def test_the_model_view_shows_its_type_record(server_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    def with_record(raw: dict) -> None:  # type: ignore[type-arg]
        raw["types"] = {
            "ig_tagging_late-stage_dlrm": {
                "owner_team": "ig-tagging-ranking",
                "description": "Ranks people to tag.",
                "default_tier": "TIER4",
                "runbook_url": "https://wiki.example/ig-tagging",
                "attributes": {"label_source": {"kind": "text", "description": "labels from"}},
            }
        }
        next(m for m in raw["models"] if m["id"] == TAGGING)["attributes"] = {
            "label_source": "accepted tags"
        }

    fleet = small_variant(tmp_path / "fleet.json", change=with_record)
    assert json.loads(fleet.read_text())["types"]
    server = server_factory(fleet=str(fleet))
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, TAGGING)
        text = screen.query_one(ModelContext).text.plain
        assert "type owner ig-tagging-ranking   runbook https://wiki.example/ig-tagging" in text
        assert "label_source=accepted tags" in text
        assert "why quiet: TIER4 policy" in screen.query_one(SloPanel).text.plain
