"""Non-finite and extreme numbers and times: refused where they enter, harmless wherever they are read.

Each test generates members of the class (hypothesis) and sends them through a boundary of the real parts:
metric ingestion then every read path (the API through the real client, ``/metrics``, the console's model view
drawn headlessly, a snapshot exported and reopened in the console); a snapshot file edited by hand; a fleet file
through ``explain``; the server clock and date-time query parameters.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from console.console_helpers import (  # tests/ is on sys.path (rootdir-relative packages)
    screen_text,
    wait_for,
)
from fleetdesk.client import FleetdeskClient
from fleetdesk.console.snapshot.app import screenshot
from fleetdesk.domain.bounds import EARLIEST, LATEST, MAX_BUCKET_SUM, MAX_SIGNAL
from fleetdesk.domain.stability import binary_entropy
from fleetdesk.fleets import FleetFileError, load_fleet
from fleetdesk.fleets.explanation import explain, render_text
from fleetdesk.server.embedded import EmbeddedServer, start_embedded
from fleetdesk.snapshot.export import capture
from fleetdesk.snapshot.reopen import SnapshotError, parse_snapshot
from fleetdesk.wire import Window

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
MODEL = "ig_notifications_late-stage_mtml.v15"
SUMS = ("weight", "label_sum", "prediction_sum", "cross_entropy_sum")
# One Prometheus text-format sample: name, labels, and a value Go's ParseFloat reads (NaN and ±Inf included).
SAMPLE = re.compile(
    r'^[a-z_:]+(\{(?:[a-z_]+="(?:[^"\\\n]|\\[\\"n])*",?)*\})? ([-+]?(?:\d[\d.e+-]*|Inf|NaN))$'
)

FLOATS = st.one_of(
    st.sampled_from(
        [
            0.0,
            -0.0,
            5e-324,
            1e-320,
            2.2250738585072014e-308,
            1e-300,
            1e-12,
            0.5,
            1.0,
            1e15,
            MAX_BUCKET_SUM,
            MAX_BUCKET_SUM * (1 + 2**-50),
            1e300,
            1.7976931348623157e308,
            math.inf,
            -math.inf,
            math.nan,
            -1.0,
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0.0, max_value=1e7),
)
FUZZ = settings(
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def acceptable(sums: dict[str, float]) -> bool:
    """The rule the server must apply (fleetdesk.domain.bounds), written out independently."""
    if not all(math.isfinite(v) and 0.0 <= v <= MAX_BUCKET_SUM for v in sums.values()):
        return False
    weight, labels = sums["weight"], sums["label_sum"]
    if not (weight > 0 and 0 < labels / weight < 1):
        return True  # no data: nothing is divided by
    calibration = sums["prediction_sum"] / labels
    ne = (sums["cross_entropy_sum"] / weight) / binary_entropy(labels / weight)
    return calibration <= MAX_SIGNAL and ne <= MAX_SIGNAL


@pytest.fixture
def live(tmp_path: Path) -> Iterator[EmbeddedServer]:
    with start_embedded("small", tmp_path / "fleetdesk.sqlite", now=NOW) as server:
        yield server


def _headers(server: EmbeddedServer, key: bool = False) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {server.admin_token}",
        **({"Idempotency-Key": uuid.uuid4().hex} if key else {}),
    }


def _post_json(
    server: EmbeddedServer, path: str, body: Any, method: str = "POST"
) -> httpx.Response:
    # json.dumps writes NaN and Infinity as bare words, as a careless producer would.
    return httpx.request(
        method,
        server.url + path,
        content=json.dumps(body),
        timeout=30,
        headers={**_headers(server, key=True), "Content-Type": "application/json"},
    )


def _set_clock(server: EmbeddedServer, now: datetime) -> None:
    response = _post_json(server, "/v1/clock", {"now": now.isoformat()}, method="PUT")
    assert response.status_code == 200, response.text


def _metrics_parse(server: EmbeddedServer) -> None:
    response = httpx.get(server.url + "/metrics", timeout=30)
    assert response.status_code == 200, response.text
    samples = [line for line in response.text.splitlines() if line and not line.startswith("#")]
    bad = [line for line in samples if not SAMPLE.match(line)]
    assert not bad, bad[:3]


async def _read_everything(server: EmbeddedServer) -> None:
    """Every read the console makes of the model, through the real client (which validates each answer)."""
    async with FleetdeskClient(server.url, SecretStr(server.viewer_token)) as client:
        await client.model(MODEL)
        await client.slo(MODEL)
        await client.lineage(MODEL)
        for window in Window:
            await client.stability(MODEL, window)
        await client.fleet_summary(limit=1000)
        await client.list_models()
        await client.event_log(after=0, limit=500)


CHART_28D = r"calibration .{0,24}\b28d\b"
"""The calibration chart's heading on the 28-day window (its newest value comes between)."""


async def _console_model_view(server: EmbeddedServer) -> str:
    """The live console's model view on the 28-day charts, drawn headlessly; its text."""
    from fleetdesk.console.app import Backend, FleetdeskApp
    from fleetdesk.console.screens.model import ModelScreen
    from fleetdesk.settings.console import ConsoleSettings

    app = FleetdeskApp(Backend(server.url, SecretStr(server.viewer_token)), ConsoleSettings())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "_loaded", False), "the fleet")
        app.push_screen(ModelScreen(MODEL))
        await wait_for(
            pilot, lambda: getattr(app.screen, "series", None) is not None, "the model view"
        )
        await pilot.press("5")  # 28 days: every bucket the test ingested
        await wait_for(pilot, lambda: app.screen.series.window is Window.D28, "the 28-day series")
        return screen_text(app)


def test_extreme_bucket_sums_are_refused_at_ingest_or_read_everywhere(live: EmbeddedServer) -> None:
    hour = [NOW]
    accepted: list[dict[str, float]] = []

    @given(st.fixed_dictionaries({name: FLOATS for name in SUMS}))
    @settings(FUZZ, max_examples=60)
    def ingest_then_read(sums: dict[str, float]) -> None:
        start = hour[0]
        hour[0] += timedelta(hours=1)
        _set_clock(live, hour[0])
        response = _post_json(
            live,
            "/v1/metrics",
            {"buckets": [{"model_id": MODEL, "start": start.isoformat(), **sums}]},
        )
        if acceptable(sums):
            assert response.status_code == 200, (sums, response.text)
            accepted.append(sums)
        else:
            assert response.status_code == 422, (sums, response.text)
            problem = response.json()
            assert response.headers["content-type"].startswith("application/problem+json")
            named = {part for error in problem["errors"] for part in error["loc"]} | {
                word
                for error in problem["errors"]
                for word in re.findall(r"[a-z_]+", error["message"])
            }
            assert named & {*SUMS, "calibration", "NE"}, problem  # the refusal names the field
        asyncio.run(_read_everything(live))
        _metrics_parse(live)

    ingest_then_read()
    assert accepted, (
        "no generated bucket was valid: the strategy no longer covers the accepted side"
    )
    shown = asyncio.run(_console_model_view(live))
    assert re.search(CHART_28D, shown), shown

    async def export_and_reopen() -> None:
        async with FleetdeskClient(live.url, SecretStr(live.viewer_token)) as client:
            snapshot = await capture(client, live.url, MODEL, windows=list(Window))
        reopened = parse_snapshot(snapshot.model_dump_json().encode()).snapshot
        assert reopened == snapshot
        assert "<svg" in await screenshot(reopened)

    asyncio.run(export_and_reopen())


def test_a_bucket_whose_totals_would_overflow_is_refused_naming_the_field(
    live: EmbeddedServer,
) -> None:
    import sqlite3

    foreign = sqlite3.connect(live.db_path, timeout=10)
    with foreign:  # a database from before totals were bounded, or edited by hand
        foreign.execute(
            "UPDATE models SET total_weight = 2e300, total_cross_entropy_sum = 1e999 WHERE id = ?",
            (MODEL,),
        )
    foreign.close()
    _set_clock(live, NOW + timedelta(hours=1))
    response = _post_json(
        live,
        "/v1/metrics",
        {
            "buckets": [
                {
                    "model_id": MODEL,
                    "start": NOW.isoformat(),
                    "weight": 1e6,
                    "label_sum": 1e5,
                    "prediction_sum": 1e5,
                    "cross_entropy_sum": 3e5,
                }
            ]
        },
    )
    assert response.status_code == 422, response.text
    assert [error["loc"] for error in response.json()["errors"]] == [
        ["body", "buckets", 0, "weight"],
        ["body", "buckets", 0, "cross_entropy_sum"],
    ]
    _metrics_parse(live)  # +Inf is a sample value the text format knows, not a 500
    assert (
        f'fleetdesk_stability_cross_entropy_sum_total{{model_id="{MODEL}"'
        in httpx.get(live.url + "/metrics").text
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with start_embedded(
        "small", tmp_path_factory.mktemp("snap") / "fleetdesk.sqlite", now=NOW
    ) as server:

        async def fetch() -> str:
            async with FleetdeskClient(server.url, SecretStr(server.viewer_token)) as client:
                return (
                    await capture(client, server.url, MODEL, windows=[Window.H24])
                ).model_dump_json()

        return json.loads(asyncio.run(fetch()))


def test_a_snapshot_edited_to_hold_extreme_numbers_is_refused_or_drawn(
    exported: dict[str, Any],
) -> None:
    @given(
        st.fixed_dictionaries({name: FLOATS for name in SUMS}),
        st.sampled_from(["points", "baseline_points"]),
    )
    @settings(FUZZ, max_examples=12)
    def reopen(sums: dict[str, float], which: str) -> None:
        document = json.loads(json.dumps(exported))
        series = document["stability"][0]
        series["points" if not series[which] else which][-1].update(sums)
        try:
            snapshot = parse_snapshot(json.dumps(document).encode()).snapshot
        except SnapshotError as error:
            assert not acceptable(sums), (sums, error)
            assert "\n" not in str(error) and "stability" in str(error)
            return
        assert acceptable(sums), sums
        assert "<svg" in asyncio.run(screenshot(snapshot))

    reopen()


TIMES = st.one_of(
    st.datetimes(
        timezones=st.sampled_from([UTC, *(timezone(timedelta(hours=h)) for h in (-23, -5, 5, 23))])
    ),
    st.sampled_from(
        [
            datetime(9999, 12, 31, 23, tzinfo=UTC),
            datetime(1, 1, 1, tzinfo=UTC),
            datetime(2200, 1, 1, tzinfo=UTC),
            datetime(1969, 12, 31, 23, 59, tzinfo=UTC),
        ]
    ),
)
TIME_TEXT = st.one_of(
    TIMES.map(datetime.isoformat),
    st.sampled_from(
        [
            "0",
            "0.0",
            "1e10",
            "-1",
            "2026-11-30",
            "2026-11-30T12:00:00",
            "2026-11-30 12:00:00Z",
            "now",
            "",
            "9999-12-31T23:00:00-05:00",
        ]
    ),
)


def _in_calendar(text: str) -> bool:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return False
    return "T" in text and moment.tzinfo is not None and EARLIEST <= moment < LATEST


def test_date_time_query_parameters_are_rfc3339_in_the_calendar(live: EmbeddedServer) -> None:
    @given(TIME_TEXT, st.sampled_from(["since", "until"]))
    @settings(FUZZ, max_examples=60)
    def query(text: str, name: str) -> None:
        response = httpx.get(
            f"{live.url}/v1/audit", params={name: text}, headers=_headers(live), timeout=30
        )
        assert response.status_code == (200 if _in_calendar(text) else 422), (text, response.text)

    query()


def test_the_clock_moves_only_inside_the_calendar_and_every_view_reads_at_its_end(
    live: EmbeddedServer,
) -> None:
    @given(TIME_TEXT)
    @settings(FUZZ, max_examples=40)
    def move(text: str) -> None:
        before = httpx.get(f"{live.url}/v1/info", headers=_headers(live), timeout=30).json()["now"]
        response = _post_json(live, "/v1/clock", {"now": text}, method="PUT")
        if _in_calendar(text) and datetime.fromisoformat(text) >= datetime.fromisoformat(before):
            assert response.status_code == 200, (text, response.text)
        else:
            assert response.status_code in (409, 422), (text, response.text)
            assert (
                httpx.get(f"{live.url}/v1/info", headers=_headers(live), timeout=30).json()["now"]
                == before
            )

    move()
    _set_clock(
        live, LATEST - timedelta(hours=1)
    )  # the last hour fleetdesk accepts: every reader still works
    asyncio.run(_read_everything(live))
    _metrics_parse(live)
    shown = asyncio.run(_console_model_view(live))
    assert re.search(CHART_28D, shown), shown


PROFILE_FLOATS = st.one_of(FLOATS, st.floats(min_value=1e-3, max_value=1e3))


def test_a_fleet_file_with_extreme_numbers_is_refused_or_explained(tmp_path: Path) -> None:
    fleet = json.loads(
        (Path(__file__).parents[2] / "fixtures" / "fleets" / "small.json").read_text()
    )

    @given(
        st.sampled_from(
            [
                "events_per_bucket",
                "base_rate",
                "calibration",
                "normalized_entropy",
                "noise",
                "magnitude",
            ]
        ),
        PROFILE_FLOATS,
        st.integers(min_value=1, max_value=40),
    )
    @example("events_per_bucket", math.inf, 1)  # the member the issue found
    @settings(FUZZ, max_examples=150)
    def load(field: str, value: float, copies: int) -> None:
        document = json.loads(json.dumps(fleet))
        model_id = document["models"][0]["id"]
        if field == "magnitude":
            # Overlapping incidents multiply: many copies of one must not leave a bucket's bounds either.
            incident = {
                "model_id": model_id,
                "kind": "traffic_shift",
                "start": document["history"]["start"],
                "magnitude": value,
            }
            document["history"]["incidents"] += [incident] * copies
        else:
            document["history"]["profiles"][model_id][field] = value
        path = tmp_path / "fleet.json"
        path.write_text(json.dumps(document))
        try:
            loaded = load_fleet(str(path))
        except FleetFileError as error:
            assert str(error).startswith(str(path))
            return
        text = render_text(explain(loaded, model_id))
        assert model_id in text
        for bucket in loaded.buckets(
            model_id
        ):  # and each bucket could be ingested, as a drill does
            assert all(math.isfinite(getattr(bucket, name)) for name in SUMS)

    load()


def test_a_scenario_with_extreme_numbers_or_durations_is_refused_naming_the_field() -> None:
    import tomllib

    from fleetdesk.drills.scenario import ScenarioError, parse_scenario

    text = (Path(__file__).parents[2] / "fixtures" / "scenarios" / "stale-feed.toml").read_text()
    assert tomllib.loads(text)  # the untouched scenario is valid
    parse_scenario(text, "stale-feed.toml")

    # TOML spells inf and nan itself; durations are ISO 8601 text. Each value must be refused in its field.
    numbers = ["inf", "-inf", "nan", "+inf", "1e999", "1e308", "0", "-1"]
    too_long = ["P999999999D", "P1000D", "P36500D", "-P1000D"]
    fields = st.one_of(
        st.tuples(
            st.sampled_from(["acknowledge_within = 60", "time_limit = 150", "magnitude = 1.5"]),
            st.sampled_from(numbers),
        ),
        # An injection may start before the drill (a negative after), but no duration is longer than LONGEST.
        st.tuples(st.just('length = "P7D"'), st.sampled_from([*too_long, "PT-1S", "-P1D"])),
        st.tuples(st.just('after = "PT2H"'), st.sampled_from(too_long)),
    )

    @given(fields)
    @settings(FUZZ, max_examples=40)
    def parse(edit: tuple[str, str]) -> None:
        original, value = edit
        name = original.split(" ")[0]
        replacement = f'{name} = "{value}"' if '"' in original else f"{name} = {value}"
        with pytest.raises(ScenarioError) as refused:
            parse_scenario(text.replace(original, replacement, 1), "edited.toml")
        assert name in str(refused.value)

    parse()


def _float_models() -> dict[str, type]:
    """Every model a wire answer or a snapshot is made of that holds a float, by name."""
    import typing

    import pydantic

    import fleetdesk.wire as wire
    from fleetdesk.snapshot.bundle import Snapshot

    found: dict[str, type] = {}
    seen: set[type] = set()

    def parts(annotation: Any) -> list[Any]:
        return [annotation, *(p for arg in typing.get_args(annotation) for p in parts(arg))]

    def walk(model: type[pydantic.BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        model.model_rebuild()
        for field in model.model_fields.values():
            for part in parts(field.annotation):
                if part is float:
                    found[model.__qualname__] = model
                elif isinstance(part, type) and issubclass(part, pydantic.BaseModel):
                    walk(part)

    for model in [Snapshot, *vars(wire).values()]:
        if isinstance(model, type) and issubclass(model, pydantic.BaseModel):
            walk(model)
    return found


def test_every_model_of_an_answer_or_a_snapshot_refuses_inf_and_nan(
    exported: dict[str, Any],
) -> None:
    models = _float_models()
    assert {"StabilityPoint", "SloStatus", "SignalGap"} <= set(models), sorted(models)
    lenient = [
        name for name, model in models.items() if model.model_config.get("allow_inf_nan", True)
    ]
    assert not lenient, lenient  # pydantic takes inf and NaN unless told not to
    document = json.loads(json.dumps(exported))
    document["stability"][0]["gaps"] = [
        {
            "other_model_id": "x",
            "relation": "baseline",
            **dict.fromkeys(["calibration", "other_calibration", "normalized_entropy"], 1.0),
            "other_normalized_entropy": 1.0,
            "calibration_change": math.nan,
            "ne_change": 0.0,
            "words": "w",
        }
    ]
    with pytest.raises(SnapshotError, match="calibration_change"):
        parse_snapshot(json.dumps(document).encode())


@pytest.mark.parametrize("count", [26, 40_321])
def test_a_series_holds_at_most_one_point_per_bucket_of_its_window(
    exported: dict[str, Any], count: int
) -> None:
    document = json.loads(json.dumps(exported))
    series = document["stability"][0]  # 24 hours: 25 buckets at most
    last = datetime.fromisoformat(series["points"][-1]["start"])
    series["points"] = [
        {**series["points"][-1], "start": (last - timedelta(hours=i)).isoformat()}
        for i in reversed(range(count))
    ]
    with pytest.raises(SnapshotError, match="points"):
        parse_snapshot(json.dumps(document).encode())
