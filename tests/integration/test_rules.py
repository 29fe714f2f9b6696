"""Generated rules and deploy examples: promtool and amtool accept them; the rules compute what the domain does."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from fleetdesk.cli import main
from fleetdesk.domain.policy import MonitoringPolicy
from fleetdesk.domain.registry import Model, Role, Tier
from fleetdesk.domain.slo import SloPolicy
from fleetdesk.domain.stability import HealthBands, StabilitySums
from fleetdesk.server.integrations import prometheus_rules as rules
from fleetdesk.server.integrations.alertmanager import ALERT_NAME, SEVERITY_BY_TIER
from fleetdesk.server.integrations.alertmanager_routes import routing_yaml

from .processes import require_binary

pytestmark = pytest.mark.integration

DEFAULT_BANDS = HealthBands(calibration_low=0.9, calibration_high=1.1, ne_max=0.95)
WIDE_TYPE = "ig_feed_late-stage_mtml"  # a dash: regex and PromQL string escaping both matter
WIDE_BANDS = HealthBands(calibration_low=0.5, calibration_high=2.5, ne_max=0.99)
POLICY = SloPolicy()
DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def write_rules(directory: Path) -> tuple[Path, Path]:
    recording = directory / "recording.yml"
    alerts = directory / "alerts.yml"
    recording.write_text(rules.recording_rule_file(POLICY).to_yaml())
    alerts.write_text(
        rules.alert_rule_file(POLICY, DEFAULT_BANDS, {WIDE_TYPE: WIDE_BANDS}).to_yaml()
    )
    return recording, alerts


def promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [require_binary("promtool"), *map(str, args)], capture_output=True, text=True, timeout=60
    )


def test_generated_rules_pass_promtool_check(tmp_path: Path) -> None:
    recording, alerts = write_rules(tmp_path)
    result = promtool("check", "rules", recording, alerts)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 7 rules found" in result.stdout
    # slice health per task and per model, 5 burn rates, the budget; each rule's alert per group of tiers the policy treats alike
    # (page-fast: TIER0-2 page, TIER3-4 held tickets; page-slow: TIER0-1, TIER2-4; ticket: TIER0-1, TIER2-4)
    assert "SUCCESS: 15 rules found" in result.stdout  # and the leader alert


@pytest.mark.parametrize("name", ["fleetdesk-recording.yml", "fleetdesk-alerts.yml"])
def test_committed_example_rules_pass_promtool_check(name: str) -> None:
    result = promtool("check", "rules", DEPLOY / name)
    assert result.returncode == 0, result.stdout + result.stderr


def test_example_prometheus_config_loads_the_committed_rules() -> None:
    result = promtool("check", "config", DEPLOY / "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 2 rule files found" in result.stdout


def test_committed_examples_are_what_the_generator_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for kind, name in (
        ("recording", "fleetdesk-recording.yml"),
        ("alerts", "fleetdesk-alerts.yml"),
        ("alertmanager", "alertmanager.yml"),
    ):
        assert main(["rules", kind, "--fleet", "small"]) == 0
        assert capsys.readouterr().out == (DEPLOY / name).read_text(), (
            f"regenerate deploy/prometheus/{name}"
        )


def _leader_test(series: list[dict[str, str]], at: str, leading: int | None) -> dict[str, object]:
    expected = (
        []
        if leading is None
        else [
            {
                "exp_labels": {"severity": "critical"},
                "exp_annotations": {
                    **rules.leader_alert().annotations,
                    "summary": f"{leading} fleetdesk replicas lead, not 1",
                },
            }
        ]
    )
    return {
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [
            {"eval_time": at, "alertname": "FleetdeskLeaderNotOne", "exp_alerts": expected}
        ],
    }


def test_the_leader_alert_pages_when_not_one_replica_leads(tmp_path: Path) -> None:
    """Two replicas: one leads for 5 minutes, then neither (its database connection lost); later both claim it.
    A takeover shorter than two minutes pages no one; no replica scraped at all is no leader."""
    _, alerts = write_rules(tmp_path)
    replicas = [
        {"series": 'fleetdesk_leader{instance="a"}', "values": "1x5 0x4 1x2 0x10 1x10"},
        {"series": 'fleetdesk_leader{instance="b"}', "values": "0x5 0x4 0x2 0x10 1x10"},
    ]
    test_file = {
        "rule_files": [str(alerts)],
        "evaluation_interval": "1m",
        "tests": [
            _leader_test(replicas, "5m", None),  # one leads
            _leader_test(replicas, "9m", 0),  # none for 3 minutes
            _leader_test(replicas, "11m", None),  # a takeover back within 2 minutes
            _leader_test(replicas, "21m", 0),
            _leader_test(replicas, "29m", 2),  # both, for 4 minutes
            _leader_test([], "5m", 0),  # nothing scraped
        ],
    }
    path = tmp_path / "leader_test.yml"
    path.write_text(yaml.safe_dump(test_file, sort_keys=False))
    result = promtool("test", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr


def _series(metric: str, labels: str, per_minute: float, minutes: int) -> dict[str, str]:
    return {"series": f"{metric}{{{labels}}}", "values": f"0+{per_minute!r}x{minutes}"}


def _model_series(
    model_id: str, model_type: str, sums: StabilitySums, minutes: int
) -> list[dict[str, str]]:
    """Counters that grow by ``sums`` every minute."""
    labels = f'model_id="{model_id}",model_type="{model_type}",tier="TIER1"'
    return [
        _series(rules.COUNTERS["events"], labels, sums.weight, minutes),
        _series(rules.COUNTERS["label_sum"], labels, sums.label_sum, minutes),
        _series(rules.COUNTERS["prediction_sum"], labels, sums.prediction_sum, minutes),
        _series(rules.COUNTERS["cross_entropy_sum"], labels, sums.cross_entropy_sum, minutes),
    ]


def _close_to(
    record: str, model_id: str, model_type: str, value: float | None
) -> dict[str, object]:
    """A promtool check that ``record`` of one model is within 1e-9 (relative) of ``value``."""
    assert value is not None
    return {
        "expr": f'abs({record}{{model_id="{model_id}"}} / {value!r} - 1) < bool 1e-9',
        "eval_time": "90m",
        "exp_samples": [
            {
                "labels": f'{{model_id="{model_id}",model_type="{model_type}",tier="TIER1"}}',
                "value": 1,
            }
        ],
    }


def test_rules_compute_domain_calibration_ne_and_fire_burn_rate_alerts(tmp_path: Path) -> None:
    recording, alerts = write_rules(tmp_path)
    # One minute of traffic per model, repeated: the 1h window sums 60 of them,
    # and ratios of window sums equal the one-minute ratios the domain computes.
    healthy = StabilitySums.from_events(
        [(0.4, 1.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.0)] * 5
    )
    drifting = StabilitySums.from_events(
        [(0.6, 1.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0)] * 5
    )
    no_positives = StabilitySums.from_events([(0.2, 0.0, 1.0)] * 20)
    assert DEFAULT_BANDS.health(healthy).value == "stable"
    assert DEFAULT_BANDS.health(drifting).value == "unstable"
    assert (
        WIDE_BANDS.health(drifting).value == "stable"
    )  # the same numbers pass under the wider bands
    minutes = 150
    hour = timedelta(hours=1)
    labels = 'model_id="{}",model_type="{}",tier="TIER1"'
    test_file = {
        "rule_files": [str(recording), str(alerts)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    *_model_series("healthy", "ig_feed_early_mtml", healthy, minutes),
                    *_model_series("drifting", "ig_feed_early_mtml", drifting, minutes),
                    *_model_series("drifting_wide", WIDE_TYPE, drifting, minutes),
                    *_model_series("silent", "ig_feed_early_mtml", no_positives, minutes),
                ],
                "promql_expr_test": [
                    *[
                        _close_to(record, model_id, model_type, value)
                        for model_id, model_type, sums in (
                            ("healthy", "ig_feed_early_mtml", healthy),
                            ("drifting", "ig_feed_early_mtml", drifting),
                            ("drifting_wide", WIDE_TYPE, drifting),
                        )
                        for record, value in (
                            (rules.calibration_record(hour), sums.calibration),
                            (rules.ne_record(hour), sums.normalized_entropy),
                        )
                    ],
                    # No positives: no calibration, no NE, no slice verdict (no data, never healthy).
                    *[
                        {
                            "expr": f'{record}{{model_id="silent"}}',
                            "eval_time": "90m",
                            "exp_samples": [],
                        }
                        for record in (
                            rules.calibration_record(hour),
                            rules.ne_record(hour),
                            rules.slice_unstable_record(hour),
                        )
                    ],
                    {
                        "expr": rules.slice_unstable_record(hour),
                        "eval_time": "90m",
                        "exp_samples": [
                            {
                                "labels": rules.slice_unstable_record(hour)
                                + "{"
                                + labels.format(m, t)
                                + "}",
                                "value": v,
                            }
                            for m, t, v in (
                                ("healthy", "ig_feed_early_mtml", 0),
                                ("drifting", "ig_feed_early_mtml", 1),
                                ("drifting_wide", WIDE_TYPE, 0),
                            )
                        ],
                    },
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "140m",
                        "alertname": "FleetdeskStabilityBurnRatePageFast",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "model_id": "drifting",
                                    "model_type": "ig_feed_early_mtml",
                                    "tier": "TIER1",
                                    "severity": "critical",
                                    "slo_rule": "page-fast",
                                    "long_window": "1h",
                                    "short_window": "5m",
                                },
                                "exp_annotations": {
                                    "summary": "drifting (TIER1) burns its stability error budget at 14.4x or more"
                                    " over 1h and 5m",
                                    "description": "Model drifting of type ig_feed_early_mtml (TIER1) is outside its"
                                    " calibration/NE bands in more than 14.4x the share of 1h slices"
                                    " its tier's objective allows; burn rate 100 over 1h.",
                                    "policy": "pages: TIER1 policy, page-fast 100x ≥ 14.4x",
                                    "console": "fleetdesk console --server http://127.0.0.1:8787  # then open drifting",
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }
    path = tmp_path / "rules_test.yml"
    path.write_text(yaml.safe_dump(test_file, sort_keys=False))
    result = promtool("test", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_rules_judge_each_task_and_the_model_by_its_worst(tmp_path: Path) -> None:
    """Per-task records carry the task label; the model's slice is unstable when one task's is, and a task with
    no data (no positives) neither breaks nor keeps a model whose other task has data; under declared task
    weights, unstable when its unstable tasks carry at least half the weight."""
    weighted_type = "ig_reels_early_mtml"
    recording, alerts = write_rules(tmp_path)
    alerts.write_text(
        rules.alert_rule_file(
            POLICY,
            DEFAULT_BANDS,
            {WIDE_TYPE: WIDE_BANDS},
            task_weights={weighted_type: {"clicks": 0.75, "comments": 0.25}},
        ).to_yaml()
    )
    healthy = StabilitySums.from_events(
        [(0.4, 1.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.0)] * 5
    )
    drifting = StabilitySums.from_events(
        [(0.6, 1.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0)] * 5
    )
    clicks = StabilitySums.from_events(
        [(0.4, 1.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.0)] * 50
    )
    no_positives = StabilitySums.from_events([(0.2, 0.0, 1.0)] * 20)
    # Summed over its tasks the drifting model is inside the bands: only per task is it not.
    assert DEFAULT_BANDS.health(clicks + drifting).value == "stable"
    hour, minutes = timedelta(hours=1), 150
    model_type = "ig_feed_early_mtml"

    def task_series(
        model_id: str, task: str, sums: StabilitySums, of_type: str = model_type
    ) -> list[dict[str, str]]:
        return [
            {**item, "series": item["series"].replace("}", f',task="{task}"}}')}
            for item in _model_series(model_id, of_type, sums, minutes)
        ]

    labels = 'model_id="{}",model_type="{}",tier="TIER1"'
    test_file = {
        "rule_files": [str(recording), str(alerts)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    *task_series("worst", "clicks", clicks),
                    *task_series("worst", "comments", drifting),
                    *task_series("sparse", "clicks", healthy),
                    *task_series("sparse", "conversions", no_positives),
                    # Weighted: a drifting light task does not make the model unstable, a heavy one does.
                    *task_series("light", "clicks", clicks, weighted_type),
                    *task_series("light", "comments", drifting, weighted_type),
                    *task_series("heavy", "clicks", drifting, weighted_type),
                    *task_series("heavy", "comments", clicks, weighted_type),
                ],
                "promql_expr_test": [
                    {
                        "expr": f'abs({rules.calibration_record(hour)}{{model_id="worst"}}'
                        f" / {sums.calibration!r} - 1) < bool 1e-9"
                        f' and {rules.calibration_record(hour)}{{task="{task}"}}',
                        "eval_time": "90m",
                        "exp_samples": [
                            {
                                "labels": "{"
                                + labels.format("worst", model_type)
                                + f',task="{task}"}}',
                                "value": 1,
                            }
                        ],
                    }
                    for task, sums in (("clicks", clicks), ("comments", drifting))
                ]
                + [
                    {
                        "expr": rules.slice_unstable_record(hour),
                        "eval_time": "90m",
                        "exp_samples": [
                            {
                                "labels": rules.slice_unstable_record(hour)
                                + "{"
                                + labels.format(model_id, of_type)
                                + "}",
                                "value": value,
                            }
                            for model_id, of_type, value in (
                                ("heavy", weighted_type, 1),
                                ("light", weighted_type, 0),
                                ("sparse", model_type, 0),
                                ("worst", model_type, 1),
                            )
                        ],
                    }
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "140m",
                        "alertname": "FleetdeskStabilityBurnRatePageFast",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "model_id": model_id,
                                    "model_type": of_type,
                                    "tier": "TIER1",
                                    "severity": "critical",
                                    "slo_rule": "page-fast",
                                    "long_window": "1h",
                                    "short_window": "5m",
                                },
                                "exp_annotations": {
                                    "summary": f"{model_id} (TIER1) burns its stability error budget at 14.4x"
                                    " or more over 1h and 5m",
                                    "description": f"Model {model_id} of type {of_type} (TIER1) is outside its"
                                    " calibration/NE bands in more than 14.4x the share of 1h slices"
                                    " its tier's objective allows; burn rate 100 over 1h.",
                                    "policy": "pages: TIER1 policy, page-fast 100x ≥ 14.4x",
                                    "console": "fleetdesk console --server http://127.0.0.1:8787"
                                    f"  # then open {model_id}",
                                },
                            }
                            for model_id, of_type in (
                                ("heavy", weighted_type),
                                ("worst", model_type),
                            )
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "tasks_test.yml"
    path.write_text(yaml.safe_dump(test_file, sort_keys=False))
    result = promtool("test", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr


TYPE = "ig_feed_early_mtml"
TIERED = MonitoringPolicy.model_validate(
    {
        "tiers": {"TIER0": {"objective": 0.999}, "TIER3": {"min_events_per_slice": 1000}},
        "team_timezones": {"ig-tagging-ranking": "Asia/Tokyo"},
    }
)
"""TIER0 keeps a tenth of the budget, TIER3 needs 1,000 events a slice, the tagging team works in Tokyo."""


def _registered(model_id: str, tier: Tier, team: str = "ig-feed-ranking") -> Model:
    return Model(
        id=model_id,
        type=TYPE,
        role=Role.BASELINE,
        tier=tier,
        tier_justification="x",
        owner_team=team,
        oncall_rotation=f"{team}-oncall",
        purpose="p",
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        updated_at=datetime(2026, 12, 1, tzinfo=UTC),
    )


TIERED_MODELS = [
    _registered("t0", Tier.TIER0),
    _registered("t1", Tier.TIER1),
    _registered("t2", Tier.TIER2),
    _registered("t3", Tier.TIER3),
    _registered("t3-sparse", Tier.TIER3),
    _registered("t4", Tier.TIER4, team="ig-tagging-ranking"),
]


def _expected_page_fast(model: Model, burn: str) -> dict[str, object]:
    """The alert the policy says one drifting model raises on page-fast, labels and annotations."""
    pages = model.tier.rank <= 2
    zone = TIERED.team_timezones.get(model.owner_team, "UTC")
    labels = {
        "model_id": model.id,
        "model_type": TYPE,
        "tier": model.tier.value,
        "severity": "critical" if pages else "warning",
        "slo_rule": "page-fast",
        "long_window": "1h",
        "short_window": "5m",
    }
    if not pages:
        labels |= {"hold": "working-hours", "timezone": zone}
    return {
        "exp_labels": labels,
        "exp_annotations": {
            "summary": f"{model.id} ({model.tier}) burns its stability error budget at 14.4x or more"
            " over 1h and 5m",
            "description": f"Model {model.id} of type {TYPE} ({model.tier}) is outside its calibration/NE"
            " bands in more than 14.4x the share of 1h slices its tier's objective allows; burn rate"
            f" {burn} over 1h.",
            "policy": f"{'pages' if pages else 'ticket'}: {model.tier} policy, page-fast {burn}x ≥ 14.4x"
            + ("" if pages else f", held for working hours ({zone})"),
            "console": f"fleetdesk console --server http://127.0.0.1:8787  # then open {model.id}",
        },
    }


def test_rules_page_ticket_hold_and_skip_sparse_slices_by_tier(tmp_path: Path) -> None:
    recording, alerts = tmp_path / "recording.yml", tmp_path / "alerts.yml"
    recording.write_text(rules.recording_rule_file(POLICY).to_yaml())
    alerts.write_text(
        rules.alert_rule_file(
            POLICY, DEFAULT_BANDS, {}, monitoring=TIERED, models=TIERED_MODELS
        ).to_yaml()
    )
    checked = promtool("check", "rules", recording, alerts)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # Every model drifts in every slice; the sparse one with 4 events a minute (240 a slice, under 1,000).
    drifting = StabilitySums.from_events(
        [(0.6, 1.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0)] * 5
    )
    sparse = StabilitySums.from_events(
        [(0.6, 1.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0), (0.3, 0.0, 1.0)]
    )
    minutes, hour = 150, timedelta(hours=1)

    def series(model: Model, sums: StabilitySums) -> list[dict[str, str]]:
        labels = f'model_id="{model.id}",model_type="{TYPE}",tier="{model.tier}"'
        return [
            _series(rules.COUNTERS[name], labels, getattr(sums, attr), minutes)
            for name, attr in (
                ("events", "weight"),
                ("label_sum", "label_sum"),
                ("prediction_sum", "prediction_sum"),
                ("cross_entropy_sum", "cross_entropy_sum"),
            )
        ]

    dense = [m for m in TIERED_MODELS if m.id != "t3-sparse"]
    test_file = {
        "rule_files": [str(recording), str(alerts)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    *[s for m in dense for s in series(m, drifting)],
                    *series(TIERED_MODELS[4], sparse),
                ],
                "promql_expr_test": [
                    # TIER0's objective is 99.9%: the same bad slices burn ten times faster.
                    {
                        "expr": f'{rules.burn_rate_record(hour)}{{model_id=~"t0|t1"}}',
                        "eval_time": "140m",
                        "exp_samples": [
                            {
                                "labels": f"{rules.burn_rate_record(hour)}"
                                f'{{model_id="{m}",model_type="{TYPE}",tier="{t}"}}',
                                "value": v,
                            }
                            for m, t, v in (("t0", "TIER0", 1000), ("t1", "TIER1", 100))
                        ],
                    },
                    # Too few events for its tier: no slice verdict at all (no data, not bad).
                    {
                        "expr": f'{rules.slice_unstable_record(hour)}{{model_id="t3-sparse"}}',
                        "eval_time": "140m",
                        "exp_samples": [],
                    },
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "140m",
                        "alertname": "FleetdeskStabilityBurnRatePageFast",
                        "exp_alerts": [
                            _expected_page_fast(m, "1e+03" if m.tier is Tier.TIER0 else "100")
                            for m in dense
                        ],
                    },
                ],
            }
        ],
    }
    path = tmp_path / "tiers_test.yml"
    path.write_text(yaml.safe_dump(test_file, sort_keys=False, allow_unicode=True))
    result = promtool("test", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("labels", "receiver", "interval"),
    [
        (['severity="critical"', "tier=TIER0"], "pager", None),
        (
            ["severity=warning", "hold=working-hours", "timezone=UTC"],
            "tickets",
            "working-hours-utc",
        ),
        (
            ["severity=warning", "hold=working-hours", "timezone=Asia/Tokyo"],
            "tickets",
            "working-hours-asia-tokyo",
        ),
        (["severity=warning", "tier=TIER1"], "tickets", None),
    ],
)
def test_alertmanager_routing_holds_tickets_for_each_teams_working_hours(
    tmp_path: Path, labels: list[str], receiver: str, interval: str | None
) -> None:
    amtool = require_binary("amtool")
    config = tmp_path / "alertmanager.yml"
    config.write_text(routing_yaml(TIERED, TIERED_MODELS))
    checked = subprocess.run(
        [amtool, "check-config", str(config)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    routed = subprocess.run(
        [amtool, "config", "routes", "test", f"--config.file={config}", "alertname=A", *labels],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert routed.returncode == 0, routed.stderr
    assert routed.stdout.strip() == receiver
    # amtool names the receiver only: which route matched, and when it may notify, is in the document.
    document = yaml.safe_load(config.read_text())
    wanted = {label.replace('"', "").partition("=")[::2] for label in labels}
    route = next(
        r
        for r in document["route"]["routes"]
        if all(m.replace('"', "").partition("=")[::2] in wanted for m in r["matchers"])
    )
    assert route.get("active_time_intervals", [None]) == [interval]
    if interval is not None:
        [period] = next(
            t["time_intervals"] for t in document["time_intervals"] if t["name"] == interval
        )
        assert period["location"] == labels[-1].partition("=")[2]
        assert period["times"] == [{"start_time": "09:00", "end_time": "17:00"}]


@pytest.mark.parametrize("tier", list(Tier))
def test_example_alertmanager_routing_pages_tier0_and_tier1_escalations(tier: Tier) -> None:
    amtool = require_binary("amtool")
    config = DEPLOY / "alertmanager.yml"
    assert (
        subprocess.run(
            [amtool, "check-config", str(config)], capture_output=True, timeout=60
        ).returncode
        == 0
    )
    labels = [
        f"alertname={ALERT_NAME}",
        f"severity={SEVERITY_BY_TIER[tier]}",
        f"tier={tier.value}",
        "team=ig-feed-ranking",
        "model_id=m",
    ]
    routed = subprocess.run(
        [amtool, "config", "routes", "test", f"--config.file={config}", *labels],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert routed.returncode == 0, routed.stderr
    assert routed.stdout.strip() == ("pager" if tier.rank <= 1 else "tickets")
