"""Fleet rows keep their ids apart at any width: the large fixture fleet and a generated 10,000-model fleet,
painted by the real fleet table at 80, 100 and 120 columns, never show two rows with the same id text."""

from __future__ import annotations

from functools import cache

import pytest
from console_helpers import screen_text
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from fleetdesk.console.glyphs import ASCII, UNICODE, Glyphs
from fleetdesk.console.widgets.fleet.fitted_ids import fit_ids
from fleetdesk.console.widgets.fleet.table import FleetTable
from fleetdesk.domain.fleet import FleetFile
from fleetdesk.fleets import build_fleet, load_fleet
from fleetdesk.fleets.generator import generate_fleet
from fleetdesk.wire import Attention, Health, ModelRow

WIDTHS = [80, 100, 120]
FOUNDATION = "ig_cross-surface_late-stage_transformer.fm-v4"


@cache
def fleet_rows(name: str) -> tuple[ModelRow, ...]:
    """Every model of a fleet as the fleet table holds it (health does not matter to ids)."""
    if name == "large":
        fleet = load_fleet("large")
    else:
        from pathlib import Path

        fleet = build_fleet(
            FleetFile.model_validate(generate_fleet(10_000, seed=7).model_dump()), Path("gen.json")
        )
    vocabulary = fleet.file.vocabulary
    rows = []
    for model in fleet.registry.models.values():
        model_type = vocabulary.parse(model.type)
        rows.append(
            ModelRow(
                id=model.id,
                type=model.type,
                app=model_type.app,
                surface=model_type.surface,
                stage=vocabulary.stage(model_type),
                tier=model.tier,
                role=model.role,
                owner_team=model.owner_team,
                health=Health.STABLE,
                attention=Attention.OK,
                budget_remaining=1.0,
                calibration=1.0,
                normalized_entropy=0.8,
                open_incident_id=None,
            )
        )
    return tuple(rows)


class Table(App):
    def __init__(self, glyphs: Glyphs = UNICODE) -> None:
        super().__init__()
        self.glyphs = glyphs

    def compose(self) -> ComposeResult:
        yield FleetTable(self.glyphs)


def painted_ids(app: Table) -> list[str]:
    """The id cells of the rows on screen, read back from what was painted."""
    table = app.query_one(FleetTable)
    start = sum(c.width + 2 for c in table.columns[: [c.key for c in table.columns].index("id")])
    width = next(c.width for c in table.columns if c.key == "id")
    lines = screen_text(app).splitlines()[1:]
    return [line[start + 1 : start + 1 + width].rstrip() for line in lines if line.strip()]


@pytest.mark.parametrize("name", ["large", "generated-10k"])
@pytest.mark.parametrize("width", WIDTHS)
async def test_every_id_reads_apart(name, width):
    rows = fleet_rows(name)
    app = Table()
    async with app.run_test(size=(width, 30)) as pilot:
        table = app.query_one(FleetTable)
        table.set_models(list(rows))
        await pilot.pause()
        id_width = next(c.width for c in table.columns if c.key == "id")
        shown = {table.shown_id(row.id) for row in rows}
        assert len(shown) == len(rows), (
            f"{len(rows) - len(shown)} ids read alike at {width} columns"
        )
        assert max(map(len, shown)) <= id_width
        painted = painted_ids(app)
        assert len(painted) == 29 and len(set(painted)) == len(painted)
        assert painted == [table.shown_id(model_id) for model_id in table.shown_ids[:29]]


async def test_siblings_of_one_type_show_their_variants_at_80_columns():
    # The case: 11 rows that all read "ig_reels_late-stage_transformer.x1…".
    app = Table()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(FleetTable)
        table.set_models(list(fleet_rows("large")))
        table.set_filter(["ig_reels_late-stage_transformer.x1"])
        await pilot.pause()
        painted = painted_ids(app)
        assert len(painted) == 11 and len(set(painted)) == 11
        assert "ig_reels_late-stage_t….x1-fresh-emb" in painted
        assert all(
            text.endswith(model_id.split(".", 1)[1])
            for text, model_id in zip(painted, table.shown_ids)
        )
        table.set_filter(["fm-v4"])
        await pilot.pause()
        assert painted_ids(app) == [
            "ig_cross-surface_late-stage….fm-v4"
        ]  # its variant, not "…transformer.f…"


async def test_ascii_ids_are_cut_with_ascii_dots():
    app = Table(ASCII)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(FleetTable)
        table.set_models(list(fleet_rows("large")))
        table.set_filter(["fm-v4"])
        await pilot.pause()
        assert painted_ids(app) == ["ig_cross-surface_late-stag....fm-v4"]
        assert screen_text(app).isascii()


def test_ids_that_fit_are_shown_whole_and_a_shared_type_head_gives_way_to_the_terms_that_differ():
    models = {
        i: (i, i.split(".")[0])
        for i in (
            "ig_feed_late-stage_mtml.v41",
            "fb_marketplace-search_late-stage_dhen.holdout-2026h2",
            "fb_marketplace-search_early-stage_dhen.holdout-2026h2",
            "fb_marketplace-search_sourcing_two-tower.holdout-2026h2",
        )
    }
    shown = fit_ids(models, 35, "…")
    assert shown["ig_feed_late-stage_mtml.v41"] == "ig_feed_late-stage_mtml.v41"
    assert (
        shown["fb_marketplace-search_late-stage_dhen.holdout-2026h2"]
        == "fb…late-stage_dhen.holdout-2026h2"
    )
    assert (
        shown["fb_marketplace-search_early-stage_dhen.holdout-2026h2"]
        == "fb…early-stage_dhen.holdout-2026h2"
    )
    assert (
        shown["fb_marketplace-search_sourcing_two-tower.holdout-2026h2"]
        == "fb…sourcing….holdout-2026h2"
    )


def test_ids_without_a_type_prefix_keep_both_ends():
    models = {f"{'x' * 40}-{n}": (f"{'x' * 40}-{n}", "") for n in range(3)}
    shown = fit_ids(models, 20, "…")
    assert sorted(shown.values()) == [f"{'x' * 6}…{'x' * 11}-{n}" for n in range(3)]


ids = st.text(alphabet=st.sampled_from("ab_.-界\x1b"), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(ids, st.sampled_from(["", "a_b", "ab_a", "a_b_a"]), min_size=1, max_size=40),
    st.integers(min_value=8, max_value=50),
    st.sampled_from(["…", "..."]),
)
def test_any_ids_read_apart_and_fit(types, width, ellipsis):
    from rich.cells import cell_len

    from fleetdesk.domain.text import sanitize

    models = {model_id: (sanitize(model_id), type_text) for model_id, type_text in types.items()}
    shown = fit_ids(models, width, ellipsis)
    assert shown.keys() == models.keys()
    assert len(set(shown.values())) == len(shown)
    assert all(cell_len(text) <= width for text in shown.values())
