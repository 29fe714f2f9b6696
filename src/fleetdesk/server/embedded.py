"""An in-process server on a random loopback port with a temp database: for the console, drills and tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from fleetdesk.server.auth import create_tokens
from fleetdesk.server.backend import Backend
from fleetdesk.server.clock import Clock
from fleetdesk.server.paging import PagingTarget
from fleetdesk.server.runner import BackgroundServer, bind
from fleetdesk.server.store import SeedProgress, is_postgres_url
from fleetdesk.wire import AccessRole


@dataclass
class EmbeddedServer:
    """A running embedded server. ``tokens``: "admin", "oncall" (every team), "viewer", "oncall:<team>"."""

    url: str
    db_path: Path | str
    """The SQLite file, or the postgresql:// URL."""
    tokens: dict[str, str] = field(repr=False)
    backend: Backend = field(repr=False)
    _runner: BackgroundServer = field(repr=False)
    _temp_dir: Path | None = field(default=None, repr=False)
    _after_stop: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def admin_token(self) -> str:
        return self.tokens["admin"]

    @property
    def oncall_token(self) -> str:
        return self.tokens["oncall"]

    @property
    def viewer_token(self) -> str:
        return self.tokens["viewer"]

    def stop(self) -> None:
        """Stop serving and remove the temp database (a given db_path is kept)."""
        self._runner.stop()
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
        if self._after_stop is not None:
            self._after_stop()

    def __enter__(self) -> EmbeddedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_embedded(
    fleet: str = "small",
    db_path: Path | str | None = None,
    *,
    now: datetime | None = None,
    paging: PagingTarget | None = None,
    demo: bool = False,
    cached: bool = False,
    say: Callable[[str], None] | None = None,
    progress: SeedProgress | None = None,
) -> EmbeddedServer:
    """Seed (or reuse) a database, start serving on 127.0.0.1:<random>, and mint tokens for each role.

    ``now`` freezes the server clock; ``demo`` also serves reads without a token. ``cached`` (with no
    ``db_path``): start from a copy of the fleet's seeded store in the cache dir, seeding it only the first
    time (server.seeded_stores); ``say`` and ``progress`` hear what is being done and how far it is.
    """
    temp_dir = None
    after_stop = None
    clock = Clock(now)
    if db_path is None:
        temp_dir = Path(tempfile.mkdtemp(prefix="fleetdesk-"))
        db_path = temp_dir / "fleetdesk.sqlite"
        if cached:
            from fleetdesk.server.seeded_stores import make_spare, prepare

            after_stop = partial(make_spare, fleet)  # the next start takes it instead of copying
            try:
                prepare(
                    fleet, db_path, now=clock.now(), say=say, progress=progress, keep_spare=True
                )
            except BaseException:
                shutil.rmtree(temp_dir, ignore_errors=True)
                raise
    if not is_postgres_url(db_path):
        db_path = Path(db_path)
    if say is not None:
        say("starting the backend")
    backend = Backend.open(db_path, fleet, clock, paging=paging, demo=demo, progress=progress)
    teams = sorted({model.owner_team for model in backend.registry.models.values()})
    names = ["admin", "oncall", "viewer", *(f"oncall:{team}" for team in teams)]
    specs: list[tuple[str, AccessRole, list[str], timedelta | None]] = [
        ("admin", AccessRole.ADMIN, [], None),
        ("oncall", AccessRole.ONCALL, teams, None),
        ("viewer", AccessRole.VIEWER, [], None),
        *((f"oncall-{team}", AccessRole.ONCALL, [team], None) for team in teams),
    ]
    tokens = dict(zip(names, create_tokens(backend.store, specs)))
    runner = BackgroundServer(backend, bind("127.0.0.1", 0))
    runner.start()
    return EmbeddedServer(
        url=runner.url,
        db_path=db_path,
        tokens=tokens,
        backend=backend,
        _runner=runner,
        _temp_dir=temp_dir,
        _after_stop=after_stop,
    )
