"""Building a snapshot through the client and writing its bundle (NAME.json, NAME.md, NAME.svg).

Export is two steps: ``capture`` asks the server for everything a handoff
needs (the same reads the console makes), and ``write_bundle`` seals it (the
redaction pass), renders the Markdown summary, checks that no known secret
survived in any byte, and writes the files atomically, the JSON last: a
bundle exists once its JSON exists.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import fleetdesk
from fleetdesk.settings import locations
from fleetdesk.snapshot import markdown
from fleetdesk.snapshot.atomic import remove_leftovers, write_files
from fleetdesk.snapshot.bundle import RelatedModel, ServerRef, Snapshot, View
from fleetdesk.snapshot.redact import Redactor
from fleetdesk.wire import AuditRecord, IncidentDetail, Lineage, ModelDetail, ModelSummary, Window

if TYPE_CHECKING:
    from fleetdesk.client import FleetdeskClient

PAGE = 500
BUNDLE_MODE = 0o600
LEFTOVER_AGE = 3600.0
"""Seconds after which a temp file of a killed export is swept by the next export into the same folder."""
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class ExportError(Exception):
    """The snapshot could not be exported; the message says why, on one line."""


@dataclass(frozen=True, slots=True)
class Bundle:
    """The files of one exported snapshot."""

    json: Path
    markdown: Path
    svg: Path | None

    @property
    def paths(self) -> list[Path]:
        return [path for path in (self.json, self.markdown, self.svg) if path is not None]


def default_dir() -> Path:
    return locations.data_dir() / "snapshots"


def public_url(url: str) -> str:
    """``url`` without user, password, query or fragment: what may be written into a snapshot."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


async def capture(
    client: FleetdeskClient,
    server_url: str,
    model_id: str,
    *,
    incident_id: int | None = None,
    windows: Iterable[Window] = (Window.H24,),
    view: View | None = None,
    screen_svg: str | None = None,
) -> Snapshot:
    """Everything a handoff about ``model_id`` needs, as the server answers it now (not yet redacted)."""
    # The shown window is always captured: the reopened console opens on it.
    windows = list(dict.fromkeys([*([view.window] if view is not None else []), *windows]))
    # Two groups, all at once: asyncio.gather types its results for up to six awaitables.
    (info, me, detail, lineage, fleet, models), series = await asyncio.gather(
        asyncio.gather(
            client.info(),
            client.me(),
            client.model(model_id),
            client.lineage(model_id),
            client.fleet_summary(),
            _all_models(client),
        ),
        asyncio.gather(*(client.stability(model_id, window) for window in windows)),
    )
    chosen = incident_id if incident_id is not None else detail.open_incident_id
    incident: IncidentDetail | None = await client.incident(chosen) if chosen is not None else None
    involved = incident.model_ids if incident is not None else [model_id]
    view = view or View(window=Window.H24 if Window.H24 in windows else windows[0])
    audit, related = await asyncio.gather(
        _audit(client, dict.fromkeys([model_id, *involved])),
        asyncio.gather(
            *(
                _related(client, other, view.window, chosen)
                for other in _one_key_away(detail, lineage, involved)
            )
        ),
    )
    return Snapshot(
        exported_by=me.user,
        exported_at=info.now,
        fleetdesk_version=fleetdesk.__version__,
        server=ServerRef(url=public_url(server_url), info=info),
        model_id=model_id,
        model=detail,
        lineage=lineage,
        stability=series,
        incident=incident,
        audit=audit,
        fleet=fleet,
        models=models,
        view=view,
        screen_svg=screen_svg,
        related=list(related),
    )


def _one_key_away(detail: ModelDetail, lineage: Lineage, involved: Iterable[str]) -> list[str]:
    """Models the console opens with one key from this one: baseline, holdout, upstream chain, incident peers."""
    candidates = [
        detail.model.baseline_model_id,
        detail.model.holdout_model_id,
        *(entry.id for entry in lineage.upstream),
        *involved,
    ]
    return [
        model_id
        for model_id in dict.fromkeys(candidates)
        if model_id and model_id != detail.model.id
    ]


async def _related(
    client: FleetdeskClient, model_id: str, window: Window, handed_over: int | None
) -> RelatedModel:
    detail, lineage, series = await asyncio.gather(
        client.model(model_id), client.lineage(model_id), client.stability(model_id, window)
    )
    own = detail.open_incident_id
    incident = await client.incident(own) if own is not None and own != handed_over else None
    return RelatedModel(model=detail, lineage=lineage, stability=[series], incident=incident)


async def _all_models(client: FleetdeskClient) -> list[ModelSummary]:
    from fleetdesk.client import PageRequest

    rows: list[ModelSummary] = []
    while True:
        page = await client.list_models(page=PageRequest(offset=len(rows), limit=PAGE))
        rows.extend(page.items)
        if not page.items or len(rows) >= page.total:
            return rows


async def _audit(client: FleetdeskClient, model_ids: Iterable[str]) -> list[AuditRecord]:
    from fleetdesk.client import PageRequest

    records: dict[int, AuditRecord] = {}
    for model_id in model_ids:
        seen = 0
        while True:
            page = await client.audit(model_id=model_id, page=PageRequest(offset=seen, limit=PAGE))
            records.update((record.id, record) for record in page.items)
            seen += len(page.items)
            if not page.items or seen >= page.total:
                break
    return sorted(records.values(), key=lambda record: (record.at, record.id), reverse=True)


def seal(snapshot: Snapshot, redactor: Redactor) -> Snapshot:
    """The snapshot with every secret masked and the masks counted in ``redactions`` (sealing twice changes nothing)."""
    already = Counter(redactor.counts)
    document = snapshot.model_dump(mode="json", exclude={"screen_svg", "redactions"})
    masked = redactor.document(document)
    svg = redactor.svg(snapshot.screen_svg) if snapshot.screen_svg is not None else None
    counts = Counter(snapshot.redactions) + (redactor.counts - already)
    return Snapshot.model_validate({**masked, "screen_svg": svg, "redactions": dict(counts)})


def bundle_name(snapshot: Snapshot) -> str:
    """``MODEL-YYYYmmddTHHMMSSZ``, safe as a file name."""
    model = _UNSAFE_NAME.sub("_", snapshot.model_id).strip("._-")[:80] or "model"
    return f"{model}-{snapshot.exported_at.strftime('%Y%m%dT%H%M%SZ')}"


def write_bundle(
    snapshot: Snapshot, redactor: Redactor, out_dir: Path | None = None, name: str | None = None
) -> Bundle:
    """Seal and write the bundle under ``out_dir`` (default: the data dir); an existing name gets a -2, -3… suffix."""
    sealed = seal(snapshot, redactor)
    directory = out_dir if out_dir is not None else default_dir()
    stem = name or _free_stem(directory, bundle_name(sealed))
    bundle = Bundle(
        json=directory / f"{stem}.json",
        markdown=directory / f"{stem}.md",
        svg=directory / f"{stem}.svg" if sealed.screen_svg is not None else None,
    )
    contents: dict[Path, bytes] = {}
    if bundle.svg is not None and sealed.screen_svg is not None:
        contents[bundle.svg] = sealed.screen_svg.encode()
    contents[bundle.markdown] = markdown.render(sealed, files=bundle.json.name).encode()
    # ASCII JSON (DEL escaped too): `cat`-ing the file cannot send C1 controls, bidi overrides or DEL to a terminal.
    text = sealed.model_dump_json(indent=1, ensure_ascii=True).replace("\x7f", "\\u007f")
    contents[bundle.json] = text.encode() + b"\n"
    for path, data in contents.items():
        if redactor.leaks(data):
            # Unreachable by construction; the last line of defence if a new field slips past seal().
            raise ExportError(
                f"refusing to write {path.name}: it would contain the exporter's token"
            )
    # Private by default: a handoff holds incident details; the engineer chooses whom to send it to.
    write_files(contents, mode=BUNDLE_MODE)
    remove_leftovers(directory, (".json", ".md", ".svg"), older_than=LEFTOVER_AGE)
    return bundle


def _free_stem(directory: Path, stem: str) -> str:
    candidate, number = stem, 1
    while (directory / f"{candidate}.json").exists():
        number += 1
        candidate = f"{stem}-{number}"
    return candidate
