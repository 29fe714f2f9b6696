"""Registry change sets: what differs between two sets of records, per model and field."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from fleetdesk.domain.registry import Model, Tier
from fleetdesk.domain.registry_change import ChangeKind, declared, diff
from fleetdesk.settings import locations

RECORDS = {
    m["id"]: Model.model_validate(m)
    for m in json.loads((locations.fleets_dir() / "small.json").read_text())["models"]
}
EXPERIMENT = "ig_feed_late-stage_mtml.x2-long-history"
OTHER_TEAM_MODEL = "fb_feed_late-stage_dhen.v52"


def test_timestamps_alone_are_no_change() -> None:
    later = datetime(2030, 1, 1, tzinfo=UTC)
    touched = {m: r.model_copy(update={"updated_at": later}) for m, r in RECORDS.items()}
    assert diff(RECORDS, touched) == []


def test_an_update_lists_each_changed_field_and_prints_as_diff_lines() -> None:
    record = RECORDS[EXPERIMENT]
    changed = record.model_copy(update={"tier": Tier.TIER2, "traffic_share": 0.05})
    [change] = diff(RECORDS, {**RECORDS, EXPERIMENT: changed})
    assert change.kind is ChangeKind.UPDATE and change.tier_changed
    assert [(f.field, f.before, f.after) for f in change.fields] == [
        ("tier", "TIER3", "TIER2"),
        ("traffic_share", 0.02, 0.05),
    ]
    assert change.lines() == [
        f"~ {EXPERIMENT}",
        "    tier: TIER3 -> TIER2",
        "    traffic_share: 0.02 -> 0.05",
    ]


def test_created_and_retired_models_by_id() -> None:
    new = RECORDS[EXPERIMENT].model_copy(update={"id": "ig_feed_late-stage_mtml.x9"})
    wanted = {**RECORDS, new.id: new}
    del wanted[EXPERIMENT]
    changes = diff(RECORDS, wanted)
    assert [(c.kind, c.model_id) for c in changes] == [
        (ChangeKind.RETIRE, EXPERIMENT),
        (ChangeKind.CREATE, new.id),
    ]
    assert changes[1].lines() == [
        "+ ig_feed_late-stage_mtml.x9 (experiment, TIER3, ig_feed_late-stage_mtml)"
    ]


def test_pruning_retires_only_the_declared_teams_models() -> None:
    team = RECORDS[EXPERIMENT].owner_team
    ours = [r for r in RECORDS.values() if r.owner_team == team and r.id != EXPERIMENT]
    wanted = declared(RECORDS, ours, prune=True)
    assert EXPERIMENT not in wanted and OTHER_TEAM_MODEL in wanted
    assert EXPERIMENT in declared(RECORDS, ours, prune=False)
