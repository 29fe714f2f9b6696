"""Registry context at the top of the model view: what it is, why it matters, what is safe."""

from __future__ import annotations

from datetime import timedelta

from rich.text import Text

from fleetdesk.console.glyphs import ATTENTION_STYLE, Glyphs
from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import LaunchPhase, Lineage, ModelDetail, TargetHealth, Tier

CLAMP = 240
"""Characters of one data-borne field (purpose, justification, attributes) the model view shows before
cutting it: a 10 KB purpose filled the view and pushed the charts off it. ``p`` shows the record whole."""


UPSTREAM_ID_CELLS = 34
"""The upstream id's room in the compact record's last line, beside the blast radius and its health."""


def one_sentence(detail: ModelDetail, limit: int | None = None) -> str:
    """What it does, how important and why, and the fallback (its health included), in one sentence;
    each data-borne part cut to ``limit`` characters."""
    model = detail.model
    purpose = sanitize(model.purpose, limit=limit).rstrip(".")
    why = sanitize(model.tier_justification, limit=limit).rstrip(".")
    importance = f"{model.tier}" + (f" because {why[0].lower()}{why[1:]}" if why else "")
    if detail.fallback:
        fallback = sanitize(
            detail.fallback
        )  # the server's words: "baseline X is itself paging since …"
    elif model.baseline_model_id:  # a snapshot from before the server judged the fallback
        fallback = f"safe fallback is its baseline {sanitize(model.baseline_model_id)}"
    else:
        fallback = "no baseline to fall back to: escalate instead"
    return f"{purpose}; {importance}; {fallback}."


def health_words(health: TargetHealth | None, glyphs: Glyphs) -> str:
    """' ✓ ok', ' ‼ page since 10:00': a neighbour's state after its id (nothing when unknown)."""
    if health is None:
        return ""
    since = ""
    if health.since is not None and not health.healthy:
        recent = health.as_of is not None and health.as_of - health.since < timedelta(hours=24)
        since = f" since {health.since:%H:%M}" if recent else f" since {health.since:%m-%d %H:%M}"
    return f" {glyphs.attention[health.attention]}{since}"


def launch_words(detail: ModelDetail) -> str:
    """``scale-up since 11-30 12:00, 3% of traffic, halted``: where the model's launch stands."""
    live = detail.live
    since = "" if detail.launch_since is None else f" since {detail.launch_since:%m-%d %H:%M}"
    halted = ", halted" if live.launch_halted else ""
    return f"{live.launch_phase}{since}, {live.traffic_share:.0%} of traffic{halted}"


def clamped(detail: ModelDetail) -> bool:
    """Some data-borne field of the record is longer than the model view shows."""
    model = detail.model
    attributes = ", ".join(f"{k}={v}" for k, v in model.attributes.items())
    return any(len(text) > CLAMP for text in (model.purpose, model.tier_justification, attributes))


def _attention(text: Text, detail: ModelDetail, glyphs: Glyphs, colours: dict[str, str]) -> None:
    text.append(
        glyphs.attention[detail.attention],
        style=f"bold {colours.get(ATTENTION_STYLE[detail.attention], '')}",
    )


def _neighbour(
    text: Text,
    label: str,
    model_id: str | None,
    health: TargetHealth | None,
    key: str,
    glyphs: Glyphs,
    colours: dict[str, str],
) -> None:
    """``baseline fb_x.v3 ‼ page since 10:00 [b]``: a neighbour, its health and the key that opens it."""
    text.append(f"{label} ", style="bold")
    if not model_id:
        text.append("none")
        return
    text.append(sanitize(model_id))
    style = colours.get(ATTENTION_STYLE[health.attention], "") if health is not None else ""
    sick = health is not None and not health.healthy
    text.append(health_words(health, glyphs), style=f"bold {style}" if sick else style)
    text.append(f" [{key}]")


def _lineage(text: Text, lineage: Lineage, glyphs: Glyphs) -> None:
    """``upstream fm-v7 ✓ ok [u]   blast radius 12 downstream: T0:1 …``"""
    text.append("upstream ", style="bold")
    if lineage.upstream:
        first = lineage.upstream[0]
        text.append(f"{sanitize(first.id)} {glyphs.attention[first.attention]} [u]")
        if len(lineage.upstream) > 1:
            text.append(f" (+{len(lineage.upstream) - 1} further up)")
    else:
        text.append("none")
    total = sum(lineage.blast_radius.values())
    text.append("   blast radius ", style="bold")
    if total:
        text.append(
            f"{total} downstream: "
            + " ".join(f"T{tier.rank}:{lineage.blast_radius.get(tier, 0)}" for tier in Tier)
        )
    else:
        text.append("none downstream")


def _compact_lineage(text: Text, lineage: Lineage, glyphs: Glyphs) -> None:
    """``blast radius 3: T0:1 T2:2 · upstream ig_cross-su…transformer.fm-v7 ✓ ok [u]`` in 80 columns: the
    tiers that have downstream models only, and a foundation id cut in its middle (its end names it)."""
    text.append("blast radius ", style="bold")
    total = sum(lineage.blast_radius.values())
    tiers = " ".join(
        f"T{tier.rank}:{count}" for tier in Tier if (count := lineage.blast_radius.get(tier, 0))
    )
    text.append(f"{total}: {tiers}" if total else "none")
    text.append(" · upstream ", style="bold")
    if not lineage.upstream:
        text.append("none")
        return
    first = lineage.upstream[0]
    shown = sanitize(first.id)
    if len(shown) > UPSTREAM_ID_CELLS:
        head = UPSTREAM_ID_CELLS // 3
        tail = UPSTREAM_ID_CELLS - head - len(glyphs.ellipsis)
        shown = shown[:head] + glyphs.ellipsis + shown[-tail:]
    text.append(f"{shown} {glyphs.attention[first.attention]} [u]")


class ModelContext(QuietStatic):
    """The registry record read out for a human; data always as plain Text, never markup."""

    DEFAULT_CSS = """
    ModelContext { height: auto; padding: 0 1; background: $surface; }
    """

    def show(
        self, detail: ModelDetail, lineage: Lineage | None, glyphs: Glyphs, whole: bool = False
    ) -> None:
        """The record; each data-borne field cut to CLAMP characters unless ``whole``."""
        model = detail.model
        limit = None if whole else CLAMP
        colours = palette(self.app)
        text = Text()
        text.append(sanitize(model.id), style="bold")
        text.append("  ")
        _attention(text, detail, glyphs, colours)
        text.append(f" · {model.tier} · {model.role}", style="bold")
        text.append("\n")
        text.append(sanitize(detail.decoded.description), style="italic")
        text.append(f"  ({sanitize(model.type)})\n", style=colours.get("foreground-muted", ""))
        sentence = one_sentence(detail, limit)
        sick = detail.baseline_health is not None and not detail.baseline_health.healthy
        fallback = sanitize(detail.fallback)
        if sick and fallback and sentence.endswith(f"{fallback}."):
            # The one clause that changes the decision stands out: the fallback is itself unhealthy.
            text.append(sentence[: -len(fallback) - 1])
            text.append(fallback, style=f"bold {colours.get('error', '')}")
            text.append(".")
        else:
            text.append(sentence)
        if not whole and clamped(detail):
            text.append("  [p: the whole record]", style=colours.get("foreground-muted", ""))
        text.append("\n")
        text.append("owner ", style="bold")
        text.append(f"{sanitize(model.owner_team)} / {sanitize(model.oncall_rotation)}")
        live = detail.live
        text.append("   launch ", style="bold")
        since = "" if detail.launch_since is None else f" since {detail.launch_since:%m-%d %H:%M}"
        text.append(f"{live.launch_phase}{since}" + (" (halted)" if live.launch_halted else ""))
        text.append("   serving ", style="bold")
        serving = "itself" if live.serving_model_id == model.id else sanitize(live.serving_model_id)
        text.append(f"{serving} at {live.traffic_share:.0%} traffic")
        if live.experiment_ended:
            text.append(" (experiment ended)")
        text.append("\n")
        record = detail.type_record
        if record is not None:  # the type's own record: who owns the category, its runbook, extras
            text.append("type owner ", style="bold")
            text.append(f"{sanitize(record.owner_team)}   ")
            text.append("runbook ", style="bold")
            text.append(sanitize(record.runbook_url))
            if model.attributes:
                text.append("   ")
                attributes = ", ".join(f"{k}={v}" for k, v in sorted(model.attributes.items()))
                text.append(sanitize(attributes, limit=limit))
            text.append("\n")
        _neighbour(
            text, "baseline", model.baseline_model_id, detail.baseline_health, "b", glyphs, colours
        )
        text.append("   ")
        _neighbour(
            text, "holdout", model.holdout_model_id, detail.holdout_health, "o", glyphs, colours
        )
        if lineage is not None:
            text.append("\n")
            _lineage(text, lineage, glyphs)
        self.show_text(text)


class CompactContext(QuietStatic):
    """The record in four lines under the title's id, for 80x24: a launch under way and its type decoded;
    tier, role, health and what it does; the fallback and its health; blast radius and upstream. A line too
    long for the width ends in an ellipsis (``p`` shows the record whole)."""

    DEFAULT_CSS = """
    CompactContext {
        height: auto; max-height: 4; padding: 0 1; background: $surface;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def show(self, detail: ModelDetail, lineage: Lineage | None, glyphs: Glyphs) -> None:
        model = detail.model
        colours = palette(self.app)
        muted = colours.get("foreground-muted", "")
        text = Text(no_wrap=True, overflow="ellipsis")
        # The id is the title right above: the first line reads it out instead, after where a launch
        # under way stands (what an on-call needs first about an experiment; a launched model has none).
        if detail.live.launch_phase is not LaunchPhase.LAUNCHED:
            text.append("launch ", style="bold")
            text.append(launch_words(detail))
            text.append(" · ", style=muted)
        text.append(f"{sanitize(detail.decoded.description)}\n", style="italic")
        text.append(f"{model.tier} · {model.role} · ", style="bold")
        _attention(text, detail, glyphs, colours)
        text.append("  [p] ", style=muted)
        text.append(sanitize(model.purpose, limit=CLAMP) + "\n")
        if model.baseline_model_id:
            _neighbour(
                text,
                "fallback",
                model.baseline_model_id,
                detail.baseline_health,
                "b",
                glyphs,
                colours,
            )
            if detail.baseline_health is not None and not detail.baseline_health.healthy:
                # What the wide view's context sentence says; here its sentence is cut at [p].
                text.append(" · escalate instead", style="bold")
        else:
            text.append("fallback ", style="bold")
            text.append("none: escalate instead")
        if model.holdout_model_id:
            text.append("   ")
            _neighbour(
                text, "holdout", model.holdout_model_id, detail.holdout_health, "o", glyphs, colours
            )
        if lineage is not None:
            text.append("\n")
            _compact_lineage(text, lineage, glyphs)
        self.show_text(text)
