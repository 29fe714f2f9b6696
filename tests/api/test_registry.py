"""Registry changes through the API, against the real server on each store: create, update, retire and apply,
validation against the whole registry, permissions, audit, history (as of a time, diffs) and the live event."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

import httpx
import pytest

from fleetdesk.client import (
    ConnectionUpdate,
    EventFeed,
    EventUpdate,
    FleetdeskClient,
    Forbidden,
    NotFound,
    PageRequest,
    RegistryIntent,
    RuleViolation,
)
from fleetdesk.client._errors import Conflict
from fleetdesk.domain.registry import LaunchPhase, Model, Tier
from fleetdesk.domain.registry_change import ChangeKind
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.wire import EventType, RegistryEventData

from .conftest import (
    EXPERIMENT,
    EXPERIMENT_BASELINE,
    EXPERIMENT_TEAM,
    OTHER_TEAM,
    SERVER_NOW,
    Connect,
)
from .test_events import QUICK, next_update

NEW = "ig_feed_late-stage_mtml.x3-fresh-start"
LONG_HISTORY = "ig_feed_late-stage_mtml.x2-long-history"  # TIER3 estimation experiment, no incident
WAIT = 10


async def new_experiment(client: FleetdeskClient, model_id: str = NEW) -> Model:
    """A new 0%-traffic experiment beside the Feed late-stage baseline (valid on its own)."""
    template = await client.registry_model(LONG_HISTORY)
    return template.model_copy(
        update={
            "id": model_id,
            "traffic_share": 0.0,
            "launch_phase": LaunchPhase.ESTIMATION,
            "purpose": "Tries a fresh-start user embedding on Feed ranking.",
        }
    )


async def test_a_created_model_is_served_audited_versioned_and_in_its_history(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    model = await new_experiment(admin)
    result = await admin.change_registry(RegistryIntent.create(model, "new Feed experiment"))
    assert not result.dry_run and result.version == 1
    [change] = result.changes
    assert change.kind is ChangeKind.CREATE and change.before is None
    assert change.after is not None and change.after.created_at == SERVER_NOW
    detail = await admin.model(
        NEW
    )  # the backend serves it at once: in the fleet list, with its state
    assert detail.model.id == NEW and detail.model.purpose == model.purpose
    listed = await admin.list_models()
    assert NEW in {m.id for m in listed.items}
    audit = await admin.audit(model_id=NEW)
    [record] = audit.items
    assert record.action == "registry.create" and record.reason == "new Feed experiment"
    assert record.actor == "admin" and record.id == result.audit_ids[0]
    assert record.detail["before"] is None and record.detail["after"]["id"] == NEW
    assert record.detail["version"] == 1
    history = await admin.model_history(NEW)
    assert [v.version for v in history.versions] == [1]
    assert history.versions[0].reason == "new Feed experiment"


async def test_an_update_lists_the_fields_it_changed_and_moves_the_live_share(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    baseline = await admin.registry_model(EXPERIMENT_BASELINE)
    experiment = await admin.registry_model(LONG_HISTORY)
    # Traffic moves from the baseline to the experiment: one apply, both records, one version.
    result = await admin.change_registry(
        RegistryIntent.apply(
            [
                baseline.model_copy(update={"traffic_share": 0.90}),
                experiment.model_copy(update={"traffic_share": 0.05}),
            ],
            "ramp x2 to 5%",
        )
    )
    assert result.version == 1 and [c.model_id for c in result.changes] == [
        EXPERIMENT_BASELINE,
        LONG_HISTORY,
    ]
    fields = {c.model_id: [(f.field, f.before, f.after) for f in c.fields] for c in result.changes}
    assert fields[LONG_HISTORY] == [("traffic_share", 0.02, 0.05)]
    assert (await admin.model(LONG_HISTORY)).live.traffic_share == 0.05
    assert len((await admin.audit(model_id=LONG_HISTORY)).items) == 1


async def test_the_same_apply_again_changes_nothing_and_a_retry_replays(connect: Connect) -> None:
    admin = await connect("admin")
    model = await new_experiment(admin)
    intent = RegistryIntent.apply([model], "sync")
    first = await admin.change_registry(intent)
    again = await admin.change_registry(intent)  # same key: the stored answer
    assert again == first
    nothing = await admin.change_registry(RegistryIntent.apply([model], "sync"))
    assert nothing.changes == [] and nothing.version is None
    assert (await admin.registry()).version == 1


async def test_a_dry_run_lists_the_changes_and_makes_none(connect: Connect) -> None:
    admin = await connect("admin")
    model = await new_experiment(admin)
    preview = await admin.change_registry(RegistryIntent.create(model, "try", dry_run=True))
    assert preview.dry_run and preview.version is None
    assert [c.kind for c in preview.changes] == [ChangeKind.CREATE]
    with pytest.raises(NotFound):
        await admin.model(NEW)
    assert (await admin.registry()).version == 0


async def test_a_change_is_refused_with_every_violation_and_nothing_changes(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    baseline = await admin.registry_model(EXPERIMENT_BASELINE)
    good = await new_experiment(admin)
    broken = good.model_copy(
        update={
            "id": "ig_feed_late-stage_mtml.x4-broken",
            "baseline_model_id": "ig_feed_late-stage_mtml.v99",
            "upstream_model_ids": ("nowhere.fm-v1",),
        }
    )
    with pytest.raises(RuleViolation) as refused:
        await admin.change_registry(
            RegistryIntent.apply(
                [good, broken, baseline.model_copy(update={"traffic_share": 0.5})], "all at once"
            )
        )
    problem = refused.value.problem
    assert problem is not None and problem.status == 422
    located = {tuple(e.loc) for e in problem.errors or []}
    assert ("models", "ig_feed_late-stage_mtml.x4-broken", "baseline_model_id") in located
    assert ("models", "ig_feed_late-stage_mtml.x4-broken", "upstream_model_ids") in located
    assert any(loc[-1] == "traffic_share" for loc in located)  # the surface no longer adds up to 1
    assert len(problem.errors or []) >= 3
    assert (await admin.registry()).version == 0  # atomic: the valid model was not created either
    with pytest.raises(NotFound):
        await admin.model(NEW)


async def test_a_tier_change_needs_a_new_justification_and_is_audited_as_one(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    record = await admin.registry_model(LONG_HISTORY)
    raised = record.model_copy(update={"tier": Tier.TIER2})
    with pytest.raises(RuleViolation) as refused:
        await admin.change_registry(RegistryIntent.update(raised, "it matters now"))
    assert refused.value.problem is not None
    assert [e.loc for e in refused.value.problem.errors or []] == [
        ["models", LONG_HISTORY, "tier_justification"]
    ]
    justified = raised.model_copy(
        update={"tier_justification": "serves 2% of Feed: a bad hour costs measurable revenue"}
    )
    result = await admin.change_registry(RegistryIntent.update(justified, "it matters now"))
    assert result.changes[0].tier_changed
    [audit] = (await admin.audit(model_id=LONG_HISTORY)).items
    assert audit.action == "registry.tier"
    assert audit.detail["tier"] == {
        "from": "TIER3",
        "to": "TIER2",
        "justification": justified.tier_justification,
    }


async def test_retiring_is_refused_while_referred_to_or_during_an_incident(
    connect: Connect,
) -> None:
    admin = await connect("admin")
    with pytest.raises(RuleViolation) as referred:
        await admin.change_registry(RegistryIntent.retire(EXPERIMENT_BASELINE, "cleanup"))
    assert referred.value.problem is not None
    referrers = {e.loc[1] for e in referred.value.problem.errors or []}
    assert {EXPERIMENT, LONG_HISTORY} <= referrers  # each model that names it, not just the first
    with pytest.raises(RuleViolation, match="open incident"):
        await admin.change_registry(RegistryIntent.retire(EXPERIMENT, "ended"))
    await admin.change_registry(RegistryIntent.create(await new_experiment(admin), "try it"))
    result = await admin.change_registry(RegistryIntent.retire(NEW, "never launched"))
    assert [c.kind for c in result.changes] == [ChangeKind.RETIRE]
    with pytest.raises(NotFound):
        await admin.model(NEW)
    assert (await admin.audit(model_id=NEW)).items[0].action == "registry.retire"
    with pytest.raises(NotFound):
        await admin.change_registry(RegistryIntent.retire(NEW, "again"))
    assert [v.change.kind for v in (await admin.model_history(NEW)).versions] == [
        ChangeKind.RETIRE,
        ChangeKind.CREATE,
    ]


async def test_create_of_a_taken_id_is_a_conflict(connect: Connect) -> None:
    admin = await connect("admin")
    record = await admin.registry_model(LONG_HISTORY)
    with pytest.raises(Conflict, match="exists already"):
        await admin.change_registry(RegistryIntent.create(record, "again"))


async def test_only_admin_or_the_owning_teams_oncall_may_change_a_model(connect: Connect) -> None:
    model = await new_experiment(await connect("admin"))
    for who in ("viewer", f"oncall:{OTHER_TEAM}"):
        client = await connect(who)
        with pytest.raises(Forbidden) as refused:
            await client.change_registry(RegistryIntent.create(model, "mine"))
        assert refused.value.problem is not None
        assert refused.value.problem.missing_permission == f"act:{EXPERIMENT_TEAM}"
    owner = await connect(f"oncall:{EXPERIMENT_TEAM}")
    await owner.change_registry(RegistryIntent.create(model, "ours"))
    # Giving a model away needs the right to act for the team it goes to as well.
    given = model.model_copy(update={"owner_team": OTHER_TEAM})
    with pytest.raises(Forbidden, match=f"act:{OTHER_TEAM}"):
        await owner.change_registry(RegistryIntent.update(given, "theirs now"))


async def test_the_fleet_listing_shows_an_updated_record_at_once(connect: Connect) -> None:
    """The listing decodes each model's registry part once per registry version: an update is a new one."""
    admin = await connect("admin")
    listed = {m.id: m for m in (await admin.list_models(page=PageRequest(limit=1000))).items}
    assert listed[LONG_HISTORY].owner_team == EXPERIMENT_TEAM
    record = await admin.registry_model(LONG_HISTORY)
    given = record.model_copy(
        update={"owner_team": OTHER_TEAM, "purpose": "Handed over with its history."}
    )
    await admin.change_registry(RegistryIntent.update(given, "handover"))
    listed = {m.id: m for m in (await admin.list_models(page=PageRequest(limit=1000))).items}
    assert listed[LONG_HISTORY].owner_team == OTHER_TEAM
    assert listed[LONG_HISTORY].purpose == "Handed over with its history."


async def test_every_write_needs_an_idempotency_key(server: EmbeddedServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as raw:
        answer = await raw.post(
            "/v1/registry/models/x/retire",
            json={"reason": "no key"},
            headers={"Authorization": f"Bearer {server.admin_token}"},
        )
    assert answer.status_code == 400
    assert answer.headers["content-type"].startswith("application/problem+json")


async def test_the_registry_as_of_a_time_and_the_diff_between_versions(connect: Connect) -> None:
    admin = await connect("admin")
    model = await new_experiment(admin)
    await admin.change_registry(RegistryIntent.create(model, "v1"))
    later = SERVER_NOW + timedelta(hours=1)
    await admin.set_clock(later)
    renamed = model.model_copy(update={"purpose": "Tries a fresh-start embedding, take two."})
    await admin.change_registry(RegistryIntent.update(renamed, "clearer purpose"))

    before = await admin.registry(as_of=SERVER_NOW - timedelta(days=1))
    assert before.version == 0 and NEW not in {m.id for m in before.models}
    at_first = await admin.registry_model(NEW, as_of=SERVER_NOW + timedelta(minutes=30))
    assert at_first.purpose == model.purpose
    assert (await admin.registry_model(NEW)).purpose == renamed.purpose
    assert (await admin.registry_model(NEW, version=1)).updated_at == SERVER_NOW
    with pytest.raises(NotFound):
        await admin.registry_model(NEW, version=0)

    step = await admin.registry_diff(1, 2)
    [change] = step.changes
    assert change.kind is ChangeKind.UPDATE
    assert [(f.field, f.after) for f in change.fields] == [("purpose", renamed.purpose)]
    whole = await admin.registry_diff(0)
    assert whole.to_version == 2 and [c.kind for c in whole.changes] == [ChangeKind.CREATE]

    history = await admin.model_history(NEW)
    assert [(v.version, v.change.kind, v.reason) for v in history.versions] == [
        (2, ChangeKind.UPDATE, "clearer purpose"),
        (1, ChangeKind.CREATE, "v1"),
    ]
    assert history.versions[0].at == later
    seeded = await admin.model_history(EXPERIMENT_BASELINE)
    assert [v.version for v in seeded.versions] == [0]


async def registry_event(feed: EventFeed) -> EventUpdate:
    async with asyncio.timeout(WAIT):
        while True:
            update = await next_update(feed)
            assert isinstance(update, EventUpdate)
            if update.event.type is EventType.REGISTRY_CHANGED:
                return update


async def test_a_change_is_streamed_as_a_registry_event(connect: Connect) -> None:
    watcher = await connect("viewer", stream=QUICK)
    admin = await connect("admin")
    feed = watcher.events()
    try:
        await next_update(feed, ConnectionUpdate)  # live: the stream starts at the newest event
        model = await new_experiment(admin)
        result = await admin.change_registry(RegistryIntent.create(model, "streamed"))
        update = await registry_event(feed)
    finally:
        await feed.aclose()
    assert update.event.model_id == NEW
    data = update.data
    assert isinstance(data, RegistryEventData)
    assert data.version == result.version and data.actor == "admin" and data.reason == "streamed"
    assert data.change.kind is ChangeKind.CREATE and data.change.after is not None


async def test_another_replica_serves_the_change_once_its_event_arrives(
    server: EmbeddedServer,
    server_factory: Callable[..., EmbeddedServer],
    store_kind: str,
    connect: Connect,
) -> None:
    if store_kind != "postgresql":
        pytest.skip("replicas share a PostgreSQL database")
    other = server_factory(db_path=server.db_path)
    admin = await connect("admin")
    reader = await connect(token=other.admin_token, url=other.url, stream=QUICK)
    feed = reader.events()
    try:
        await next_update(feed, ConnectionUpdate)
        model = await new_experiment(admin)
        await admin.change_registry(RegistryIntent.create(model, "on the first replica"))
        await registry_event(feed)
        assert (await reader.model(NEW)).model.id == NEW
        record = type_record()
        await admin.change_registry(RegistryIntent.put_type(FEED_TYPE, record, "and its type"))
        await registry_event(feed)
        assert (await reader.model(NEW)).type_record == record
    finally:
        await feed.aclose()


async def test_a_teams_pruning_apply_retires_only_its_own_models(connect: Connect) -> None:
    admin = await connect("admin")
    await admin.change_registry(RegistryIntent.create(await new_experiment(admin), "try it"))
    owner = await connect(f"oncall:{EXPERIMENT_TEAM}")
    ours = [m for m in (await owner.registry()).models if m.owner_team == EXPERIMENT_TEAM]
    kept = [m for m in ours if m.id != NEW]
    result = await owner.change_registry(
        RegistryIntent.apply(kept, "our source of truth", prune=True)
    )
    assert [(c.kind, c.model_id) for c in result.changes] == [(ChangeKind.RETIRE, NEW)]


FEED_TYPE = "ig_feed_late-stage_mtml"


def type_record(**attributes: object) -> ModelTypeRecord:
    return ModelTypeRecord.model_validate(
        {
            "owner_team": EXPERIMENT_TEAM,
            "description": "Instagram Feed late-stage multi-task ranking.",
            "default_tier": "TIER3",
            "runbook_url": "https://runbooks.example/ig-feed-ranking",
            "attributes": attributes,
        }
    )


async def test_a_type_record_is_checked_against_every_model_of_its_type(connect: Connect) -> None:
    admin = await connect("admin")
    models = [m for m in (await admin.registry()).models if m.type == FEED_TYPE]
    required = type_record(launch_doc={"kind": "text", "description": "Doc", "required": True})
    with pytest.raises(RuleViolation) as refused:
        await admin.change_registry(RegistryIntent.put_type(FEED_TYPE, required, "docs"))
    assert refused.value.problem is not None
    assert sorted(e.loc[1] for e in refused.value.problem.errors or []) == sorted(
        m.id for m in models
    )  # every model of the type that lacks it, each named
    optional = type_record(launch_doc={"kind": "text", "description": "Doc"})
    result = await admin.change_registry(RegistryIntent.put_type(FEED_TYPE, optional, "docs"))
    [change] = result.type_changes
    assert change.kind is ChangeKind.CREATE and change.after == optional
    assert (await admin.audit(model_id=FEED_TYPE)).items[0].action == "registry.type-create"
    assert (await admin.registry()).types == {FEED_TYPE: optional}
    assert (await admin.model(LONG_HISTORY)).type_record == optional  # served at once
    documented = (await admin.registry_model(LONG_HISTORY)).model_copy(
        update={"attributes": {"launch_doc": "https://docs.example/x2"}}
    )
    await admin.change_registry(RegistryIntent.update(documented, "linked its doc"))
    with pytest.raises(RuleViolation, match="attributes.launch_doc"):
        await admin.change_registry(RegistryIntent.retire_type(FEED_TYPE, "no longer"))
    assert (await admin.registry_diff(0)).type_changes[0].type == FEED_TYPE
    assert (await admin.registry(version=0)).types == {}
    history = await admin.type_history(FEED_TYPE)
    assert [(v.change.kind, v.reason) for v in history.versions] == [(ChangeKind.CREATE, "docs")]
    with pytest.raises(NotFound):
        await admin.type_history("ig_reels_late-stage_dhen")


async def test_type_records_need_the_owning_team_and_keep_their_bands(connect: Connect) -> None:
    other = await connect(f"oncall:{OTHER_TEAM}")
    with pytest.raises(Forbidden, match=f"act:{EXPERIMENT_TEAM}"):
        await other.change_registry(RegistryIntent.put_type(FEED_TYPE, type_record(), "mine"))
    banded = type_record().model_copy(
        update={"bands": {"*": (await (await connect("admin")).model(LONG_HISTORY)).bands}}
    )
    owner = await connect(f"oncall:{EXPERIMENT_TEAM}")
    with pytest.raises(RuleViolation, match="cannot change live"):
        await owner.change_registry(RegistryIntent.put_type(FEED_TYPE, banded, "bands"))
    watcher = await connect("viewer", stream=QUICK)
    feed = watcher.events()
    try:
        await next_update(feed, ConnectionUpdate)
        await owner.change_registry(RegistryIntent.put_type(FEED_TYPE, type_record(), "ours"))
        update = await registry_event(feed)
    finally:
        await feed.aclose()
    assert isinstance(update.data, RegistryEventData) and update.data.type_change is not None
    assert update.data.type_change.type == FEED_TYPE and update.event.model_id is None


async def test_a_type_record_is_updated_and_retired_audited_and_in_its_history(
    connect: Connect,
) -> None:
    owner = await connect(f"oncall:{EXPERIMENT_TEAM}")
    admin = await connect("admin")
    first = type_record(launch_doc={"kind": "text", "description": "Doc"})
    await owner.change_registry(RegistryIntent.put_type(FEED_TYPE, first, "docs"))
    second = first.model_copy(update={"description": "Feed late-stage ranking, multi-task."})
    updated = await owner.change_registry(RegistryIntent.put_type(FEED_TYPE, second, "clearer"))
    [change] = updated.type_changes
    assert (change.kind, change.before, change.after) == (ChangeKind.UPDATE, first, second)
    assert [f.field for f in change.fields] == ["description"]
    assert (await admin.model(LONG_HISTORY)).type_record == second  # served at once
    retired = await owner.change_registry(RegistryIntent.retire_type(FEED_TYPE, "folded in"))
    [change] = retired.type_changes
    assert (change.kind, change.before, change.after) == (ChangeKind.RETIRE, second, None)
    assert (await admin.registry()).types == {}
    assert (await admin.model(LONG_HISTORY)).type_record is None
    audited = (await admin.audit(model_id=FEED_TYPE)).items
    assert [(r.action, r.reason) for r in audited] == [
        ("registry.type-retire", "folded in"),
        ("registry.type-update", "clearer"),
        ("registry.type-create", "docs"),
    ]  # newest first
    history = await admin.type_history(FEED_TYPE)
    assert [v.change.kind for v in history.versions] == [
        ChangeKind.RETIRE,
        ChangeKind.UPDATE,
        ChangeKind.CREATE,
    ]
    assert {v.actor for v in history.versions} == {r.actor for r in audited} != {"admin"}
    with pytest.raises(NotFound, match="no record of type"):
        await owner.change_registry(RegistryIntent.retire_type(FEED_TYPE, "again"))
