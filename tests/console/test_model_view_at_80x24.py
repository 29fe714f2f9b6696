"""The model view at 80x24 answers without scrolling: the record in four lines, both charts side by side with
their newest values as numbers, the SLO in one line; long data-borne text is cut, and ``p`` reads it whole.
At 120x40 the richer layout stays."""

from __future__ import annotations

from console_helpers import TIER0_BASELINE, make_app, screen_text, wait_for

from fleet_variants import small_variant
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.screens.record import RecordScreen
from fleetdesk.console.widgets.model.chart import StabilityChart
from fleetdesk.console.widgets.model.context import CompactContext, ModelContext
from fleetdesk.console.widgets.model.slo_line import SloLine
from fleetdesk.console.widgets.model.slo_panel import SloPanel

LONG_PURPOSE = "Ranks the feed. " + "This sentence goes on and on. " * 340
"""About 10 KB of purpose, as a registry may hold."""
ENDING = "the very end of the purpose"


async def open_model(pilot, model_id: str) -> ModelScreen:
    screen = ModelScreen(model_id)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot,
        lambda: screen.detail is not None and screen.series is not None and pilot.app.me,
        "the model view",
    )
    await pilot.pause()
    return screen


def on_screen(widget) -> bool:
    """Shown whole, without scrolling."""
    region = widget.screen.find_widget(widget).visible_region
    return region.height == widget.region.height > 0 and region.bottom <= widget.screen.size.height


async def test_a_paging_model_answers_at_80x24_without_scrolling(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        screen = await open_model(pilot, TIER0_BASELINE)
        compact = screen.query_one(CompactContext)
        assert on_screen(compact) and compact.region.height <= 4
        assert not screen.query_one(ModelContext).display and not screen.query_one("#lower").display
        charts = list(screen.query(StabilityChart))
        assert len(charts) == 2 and all(on_screen(chart) for chart in charts)
        calibration, ne = charts
        assert calibration.region.y == ne.region.y and calibration.region.right <= ne.region.x
        assert on_screen(screen.query_one(SloLine))
        text = screen_text(pilot.app)
        lines = text.splitlines()
        assert lines[0].strip() == f"fleetdesk · model {TIER0_BASELINE}"
        assert lines[1].strip().startswith("Facebook · Feed · late-stage")
        assert "TIER0 · baseline · ‼ page" in lines[2]
        assert "fallback none: escalate instead" in lines[3]
        assert "blast radius" in lines[4] and "upstream" in lines[4]
        # The newest value of each signal is written, beside its chart's name.
        newest = screen.series.points[-1]
        assert f"calibration {newest.calibration:.3f}" in text
        assert f"NE {newest.normalized_entropy:.3f}" in text
        slo = next(line for line in lines if line.strip().startswith("SLO "))
        assert "budget" in slo and "worst burn" in slo and "PAGE" in slo
        assert not screen.query_one("#model-body").max_scroll_y


async def test_the_richer_layout_stays_at_120x40(server):
    async with make_app(server).run_test(size=(120, 40)) as pilot:
        screen = await open_model(pilot, TIER0_BASELINE)
        assert screen.query_one(ModelContext).display and on_screen(screen.query_one(SloPanel))
        assert not screen.query_one(CompactContext).display
        assert not screen.query_one(SloLine).display
        assert "owner " in screen_text(pilot.app)


async def test_a_10kb_purpose_is_cut_and_p_reads_it_whole(server_factory, tmp_path):
    def long_purpose(raw: dict) -> None:
        for model in raw["models"]:
            if model["id"] == TIER0_BASELINE:
                model["purpose"] = LONG_PURPOSE + ENDING + "."

    fleet = small_variant(tmp_path / "fleet.json", change=long_purpose)
    server = server_factory(fleet=str(fleet))
    for size in ((80, 24), (120, 40)):
        async with make_app(server).run_test(size=size) as pilot:
            screen = await open_model(pilot, TIER0_BASELINE)
            assert all(on_screen(chart) for chart in screen.query(StabilityChart)), size
            assert ENDING not in screen_text(pilot.app)
            await pilot.press("p")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, RecordScreen), "the record")
            record = pilot.app.screen
            assert ENDING in record.query_one(ModelContext).text.plain
            await pilot.press("escape")
            await wait_for(
                pilot, lambda model=screen: pilot.app.screen is model, "back to the model"
            )
