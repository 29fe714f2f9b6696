"""Read routes at the HTTP level: filters, sort and paging, lineage, series, fleet summary."""

from __future__ import annotations

from fleetdesk.server.embedded import EmbeddedServer

from .helpers import BASELINE, EXPERIMENT, get

FOUNDATION = "ig_cross-surface_late-stage_transformer.fm-v7"


def test_list_filters_and_pages_with_total(server: EmbeddedServer) -> None:
    everything = get(server, "/v1/models", limit=1000).json()
    assert everything["total"] == len(server.backend.registry) == len(everything["items"])
    experiments = get(server, "/v1/models", role="experiment", app="ig").json()
    assert experiments["total"] == len(experiments["items"]) > 0
    assert all(m["role"] == "experiment" and m["app"] == "ig" for m in experiments["items"])
    tiers = get(server, "/v1/models", tier=["TIER0", "TIER1"]).json()["items"]
    assert {m["tier"] for m in tiers} == {"TIER0", "TIER1"}
    found = get(server, "/v1/models", q="WATCH-TIME").json()["items"]
    assert [m["id"] for m in found] == [EXPERIMENT]
    assert get(server, "/v1/models", q="100%_").json()["total"] == 0  # LIKE wildcards are literal
    first = get(server, "/v1/models", sort="id", limit=5).json()
    second = get(server, "/v1/models", sort="id", limit=5, offset=5).json()
    ids = [m["id"] for m in first["items"] + second["items"]]
    assert ids == sorted(ids) and len(set(ids)) == 10 and first["total"] == everything["total"]


def test_worst_first_puts_paging_top_tiers_first(server: EmbeddedServer) -> None:
    ranks = {"page": 0, "ticket": 1, "unstable": 2, "no_data": 3, "ok": 4}
    items = get(server, "/v1/models", limit=1000).json()["items"]
    keys = [(ranks[m["attention"]], int(m["tier"][-1])) for m in items]
    assert keys == sorted(keys)
    summary = get(server, "/v1/fleet/summary").json()
    assert summary["total_models"] == len(items)
    assert sum(n for tiers in summary["counts"].values() for n in tiers.values()) == len(items)
    assert [m["id"] for m in summary["worst"]] == [
        m["id"] for m in items if m["attention"] != "ok"
    ][:20]


def test_lineage_blast_radius_and_upstream_chain(server: EmbeddedServer) -> None:
    lineage = get(server, f"/v1/models/{FOUNDATION}/lineage").json()
    assert lineage["upstream"] == []
    assert BASELINE in {m["id"] for m in lineage["downstream"]}
    assert sum(lineage["blast_radius"].values()) == len(lineage["downstream"])
    chain = get(server, f"/v1/models/{EXPERIMENT}/lineage").json()
    assert [m["id"] for m in chain["upstream"]] == [FOUNDATION]


def test_stability_series_has_bands_points_and_baseline_overlay(server: EmbeddedServer) -> None:
    series = get(server, f"/v1/models/{EXPERIMENT}/stability", window="24h").json()
    assert len(series["points"]) <= 24 and series["baseline_model_id"] == BASELINE
    assert len(series["baseline_points"]) == 24
    point = series["points"][-1]
    assert point["calibration"] == point["prediction_sum"] / point["label_sum"]
    assert set(series["bands"]) == {"calibration_low", "calibration_high", "ne_max", "min_events"}
    detail = get(server, f"/v1/models/{EXPERIMENT}").json()
    assert detail["decoded"]["stage"] == "late-stage ranking" and detail["slo"]["objective"] == 0.99
