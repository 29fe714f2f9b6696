"""Registry context at the top of the model view: what it is, why it matters, what is safe."""

from __future__ import annotations

from datetime import timedelta

from rich.text import Text

from fleetdesk.console.glyphs import ATTENTION_STYLE, Glyphs
from fleetdesk.console.palette import palette
from fleetdesk.console.widgets.common.quiet import QuietStatic
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import Lineage, ModelDetail, TargetHealth, Tier


def one_sentence(detail: ModelDetail) -> str:
    """What it does, how important and why, and the fallback (its health included), in one sentence."""
    model = detail.model
    purpose = sanitize(model.purpose).rstrip(".")
    why = sanitize(model.tier_justification).rstrip(".")
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


class ModelContext(QuietStatic):
    """The registry record read out for a human; data always as plain Text, never markup."""

    DEFAULT_CSS = """
    ModelContext { height: auto; padding: 0 1; background: $surface; }
    """

    def show(self, detail: ModelDetail, lineage: Lineage | None, glyphs: Glyphs) -> None:
        model = detail.model
        colours = palette(self.app)
        text = Text()
        text.append(sanitize(model.id), style="bold")
        text.append("  ")
        text.append(
            glyphs.attention[detail.attention],
            style=f"bold {colours.get(ATTENTION_STYLE[detail.attention], '')}",
        )
        text.append(f" · {model.tier} · {model.role}", style="bold")
        text.append("\n")
        text.append(sanitize(detail.decoded.description), style="italic")
        text.append(f"  ({sanitize(model.type)})\n", style=colours.get("foreground-muted", ""))
        sentence = one_sentence(detail)
        sick = detail.baseline_health is not None and not detail.baseline_health.healthy
        fallback = sanitize(detail.fallback)
        if sick and fallback and sentence.endswith(f"{fallback}."):
            # The one clause that changes the decision stands out: the fallback is itself unhealthy.
            text.append(sentence[: -len(fallback) - 1])
            text.append(fallback, style=f"bold {colours.get('error', '')}")
            text.append(".\n")
        else:
            text.append(sentence + "\n")
        text.append("owner ", style="bold")
        text.append(f"{sanitize(model.owner_team)} / {sanitize(model.oncall_rotation)}")
        live = detail.live
        text.append("   launch ", style="bold")
        phase = f"{live.launch_phase}" + (" (halted)" if live.launch_halted else "")
        text.append(phase)
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
                text.append(
                    sanitize(", ".join(f"{k}={v}" for k, v in sorted(model.attributes.items())))
                )
            text.append("\n")
        for label, model_id, health, key in (
            ("baseline", model.baseline_model_id, detail.baseline_health, "b"),
            ("holdout", model.holdout_model_id, detail.holdout_health, "o"),
        ):
            text.append(("   " if label == "holdout" else "") + f"{label} ", style="bold")
            if not model_id:
                text.append("none")
                continue
            text.append(sanitize(model_id))
            words = health_words(health, glyphs)
            style = colours.get(ATTENTION_STYLE[health.attention], "") if health is not None else ""
            text.append(
                words, style=f"bold {style}" if health is not None and not health.healthy else style
            )
            text.append(f" [{key}]")
        if lineage is not None:
            text.append("\nupstream ", style="bold")
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
        self.show_text(text)
