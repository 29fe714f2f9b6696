"""The Markdown summary: the four handoff questions answered, and data that cannot inject Markdown or escapes."""

from __future__ import annotations

import re

import factory

from fleetdesk.snapshot import markdown


def test_summary_answers_what_is_wrong_done_open_and_next() -> None:
    text = markdown.render(factory.snapshot(), files="handoff.json")
    sections = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert sections[:4] == [
        "What is wrong",
        "What was done",
        "What is still open",
        "Next steps (from notes)",
    ]
    assert "error budget left -96.0%" in text
    assert "Alert firing: page-fast" in text
    assert "**rollback** (serving `ig_feed_late_mtml_exp7` to `ig_feed_late_mtml_base`" in text
    assert "Incident 7 is acknowledged by alice." in text
    assert "next: watch NE after rollback; page ranking-infra if it stays high" in text
    assert "`fleetdesk open handoff.json`" in text


def test_hostile_note_is_inert_markdown_and_has_no_control_characters() -> None:
    hostile = "[click](https://evil.example) ![x](y) <img src=x> `code` **bold** # head \x1b[2J\u202e done\n- item"
    text = markdown.render(factory.snapshot(note=hostile))
    line = next(
        item
        for item in text.splitlines()
        if item.startswith("- ") and "click" in item and "alice:" in item
    )
    assert "\\[click\\]\\(https://evil.example\\)" in line
    assert "!\\[x\\]" in line and "\\<img src=x\\>" in line
    assert "\\`code\\`" in line and "\\*\\*bold\\*\\*" in line and "\\# head" in line
    assert "\\x1b" in line and "\\u202e" in line and "\\x0a- item" in line
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e]", text)


def test_code_span_fence_outgrows_backticks_inside() -> None:
    assert markdown.code("a``b") == "```a``b```"
    assert markdown.code("`x") == "`` `x ``"


def test_nothing_done_and_no_notes_say_so() -> None:
    snap = factory.snapshot(audit_records=0)
    snap = snap.model_copy(update={"incident": snap.incident.model_copy(update={"notes": []})})
    text = markdown.render(snap)
    assert "- Nothing yet: no action is recorded in the audit log." in text
    assert "- No notes were left." in text


def test_model_notes_outside_an_incident_are_next_steps_too() -> None:
    snap = factory.snapshot(audit_records=2)
    record = snap.audit[1].model_copy(
        update={"incident_id": None, "detail": {"text": "next: recheck at 09:00"}}
    )
    snap = snap.model_copy(update={"incident": None, "audit": [snap.audit[0], record]})
    text = markdown.render(snap)
    assert "- No incident is attached to this snapshot." in text
    next_steps = text.split("## Next steps (from notes)")[1]
    assert "alice: next: recheck at 09:00" in next_steps


def test_a_sick_fallback_a_shared_cause_and_repeats_are_handed_over() -> None:
    from datetime import timedelta

    from fleetdesk.domain.playbook import Neighbour, fallback_words, target_health
    from fleetdesk.wire import Attention, Health, IncidentGroup

    snap = factory.snapshot()
    detail = snap.model
    baseline = detail.model.model_copy(
        update={"id": factory.BASELINE_ID, "role": "baseline", "baseline_model_id": None}
    )
    health = target_health(
        Neighbour(
            model=baseline,
            live=detail.live,
            health=Health.UNSTABLE,
            attention=Attention.PAGE,
            since=factory.NOW - timedelta(hours=6),
            alerts=("page-fast",),
        ),
        "baseline",
        factory.NOW,
    )
    detail = detail.model_copy(
        update={"baseline_health": health, "fallback": fallback_words(detail.model, health)}
    )
    first = snap.incident.timeline[0]
    repeated = first.model_copy(
        update={"kind": "alert", "repeats": 12, "last_at": factory.NOW - timedelta(hours=1)}
    )
    group = IncidentGroup(
        app="ig",
        surface="feed",
        label="Instagram · Feed",
        started_at=factory.NOW - timedelta(hours=6),
    )
    incident = snap.incident.model_copy(
        update={
            "group": group,
            "model_ids": [factory.MODEL_ID, "b", "c"],
            "timeline": [first, repeated, *snap.incident.timeline[1:]],
        }
    )
    text = markdown.render(snap.model_copy(update={"model": detail, "incident": incident}))
    baseline_id = factory.BASELINE_ID.replace("_", "\\_")
    assert (
        f"- Fallback: **baseline {baseline_id} is itself paging since 00:00: escalate** (baseline"
        f" {baseline_id} is paging since 00:00 \\(page-fast\\))."
    ) in text
    assert (
        "- Shared cause suspected: 3 models of Instagram · Feed turned unstable together, since"
        in text
    )
    assert "(12 times, last 2026-" in text
    healthy = markdown.render(factory.snapshot())  # an older snapshot: no fallback words recorded
    assert (
        f"- Fallback: baseline `{factory.BASELINE_ID}` (its health was not recorded in this snapshot)."
        in healthy
    )
