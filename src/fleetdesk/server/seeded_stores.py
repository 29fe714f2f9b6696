"""Seeded stores kept between starts of the embedded console, so ``fleetdesk console --fleet large`` seeds
its 921,597 buckets once (about 7 s) instead of on every start.

One store per fleet file content and seeding recipe lives under the XDG cache dir; a start copies it (the
console's actions change its copy, never the cached one) and serves the copy. Copying the large fleet's
54 MB was a third of a warm start, so a console leaves a spare copy when it ends (and the seeding start
one at once), which the next start renames into place.

- **Key.** A hash of the fleet file's bytes and of the recipe that turns them into a store: the schema
  version and the source of the code that synthesizes and writes the buckets. Editing the fleet file or
  that code makes a new store; stores of other keys for the same fleet are removed.
- **Time.** The history is seeded to end at the hour it was seeded. A later start *continues* it to the
  current hour, with the buckets the same history would have had (``Fleet.continued_until``: the same
  noise stream, drifts held at the magnitude they reached, feed stops still stopped), written into the
  cached store in one transaction: an hour later that is 1,200 buckets, not a new seed. So a cached
  store always ends at "now" like a fresh one; what moved is that the fleet's incidents began longer ago.
  A history older than ``MAX_CONTINUED`` is seeded again instead (continuing it would cost about as much).
- **Two consoles at once.** Seeding, continuing and copying happen under an exclusive ``flock`` on the
  store's lock file: the second console waits (and says so), then copies what the first one made.
- **Crashes.** A store is seeded into a temporary file, checkpointed and synced, then renamed into place;
  a crash mid-seed leaves only the temporary file, which the next start removes. A continuation is one
  SQLite transaction.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path

from fleetdesk.fleets import load_fleet, resolve_fleet_path
from fleetdesk.server.store import SCHEMA_VERSION, SeedProgress, Store
from fleetdesk.settings import locations

MAX_CONTINUED = timedelta(days=7)
"""A cached history older than this is seeded again rather than continued."""
_STORE_NAME = re.compile(
    r"\.?[^/]+-[0-9a-f]{8}-[0-9a-f]{20}(\.spare)?\.sqlite(-wal|-shm|\.\d+\.tmp(-wal|-shm)?)?"
)
"""A cached store or spare, its SQLite side files, or a seed's or copy's temporary file."""
_RECIPE_MODULES = (
    "fleetdesk.domain.synthetic",
    "fleetdesk.fleets.files",
    "fleetdesk.server.store.contract",
    "fleetdesk.server.store.seeding",
    "fleetdesk.server.store.sqlite_schema",
    "fleetdesk.server.store.values",
)
"""The code that decides what a seeded store holds: its source is part of the key."""


class Outcome(StrEnum):
    SEEDED = "seeded"
    CONTINUED = "continued"
    REUSED = "reused"


@dataclass(frozen=True)
class Prepared:
    """A start's own copy of the cached store, and how it came to be."""

    path: Path
    outcome: Outcome
    buckets: int
    """Buckets written by this start: all of them when seeded, the new hours' when continued, else 0."""
    cached: Path
    claimed_spare: bool = False
    """This start took the spare copy an earlier start had left (no copy made)."""


Say = Callable[[str], None]
"""Tells the engineer what is going on (one line, replaced by the next)."""


def stores_dir() -> Path:
    return locations.cache_dir() / "stores"


def store_key(fleet_file: Path) -> str:
    """The cache key of a fleet file: its bytes, the schema version and the seeding code's source."""
    digest = hashlib.sha256(fleet_file.read_bytes())
    digest.update(f"schema {SCHEMA_VERSION}".encode())
    for name in _RECIPE_MODULES:
        module = __import__(name, fromlist=["__file__"])
        digest.update(Path(inspect.getfile(module)).read_bytes())
    return digest.hexdigest()[:20]


def lock_path(fleet: str) -> Path:
    """The lock file of a fleet's cached stores: named after the file and where it is (two fleet.json in two
    folders are two fleets; their content decides which store of them is current)."""
    source = resolve_fleet_path(fleet)
    return (
        stores_dir()
        / f"{source.stem}-{hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:8]}.lock"
    )


def prepare(
    fleet: str,
    into: Path,
    *,
    now: datetime,
    say: Say | None = None,
    progress: SeedProgress | None = None,
    keep_spare: bool = False,
) -> Prepared:
    """A store for ``fleet`` whose history ends at ``now`` at ``into``: seeded once, then copied.

    A spare copy left by an earlier start is taken instead of copying; ``keep_spare`` makes one at once
    when this start seeded the store (call ``make_spare`` when the console ends, for the starts after)."""
    say = say or (lambda _: None)
    lock, cached, spare = _paths(fleet)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with _locked(lock, say):
        _remove_leftovers(lock.parent, lock.stem, keep={cached, spare})
        outcome, buckets = _bring_up_to(cached, fleet, now, say, progress)
        if outcome is Outcome.SEEDED:
            spare.unlink(missing_ok=True)  # a copy of the store this seed replaced
        claimed = spare.exists()
        if claimed:
            os.replace(spare, into)  # a copy of the store as it was at an earlier start
        else:
            shutil.copyfile(cached, into)
        if keep_spare and outcome is Outcome.SEEDED:
            _copy(cached, spare)
    if claimed:
        buckets += _continue_copy(into, fleet, now, progress)
    return Prepared(into, outcome, buckets, cached, claimed)


def make_spare(fleet: str) -> None:
    """Leave a copy of the fleet's cached store for the next start to take (at a console's end: the next
    start then renames it into place instead of copying 54 MB for the large fleet)."""
    lock, cached, spare = _paths(fleet)
    if not lock.parent.is_dir():
        return
    with _locked(lock, lambda _: None):
        if cached.exists() and not spare.exists():
            _copy(cached, spare)


def _paths(fleet: str) -> tuple[Path, Path, Path]:
    """The fleet's lock file, its cached store (for the file's current content) and that store's spare."""
    lock = lock_path(fleet)
    cached = lock.with_name(f"{lock.stem}-{store_key(resolve_fleet_path(fleet))}.sqlite")
    return lock, cached, cached.with_suffix(".spare.sqlite")


def _copy(source: Path, target: Path) -> None:
    """A whole copy or none: copied under a temporary name, then renamed."""
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        shutil.copyfile(source, temp)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def _continue_copy(path: Path, fleet: str, now: datetime, progress: SeedProgress | None) -> int:
    """Bring a taken spare (this start's own file now) up to now, as the cached store was."""
    store = Store(path)
    try:
        end = store.history_end()
        if end is None or now - end < store.fleet_config().bucket:
            return 0
        return store.extend(load_fleet(fleet, end_at=end), now, progress)
    finally:
        store.close()


def _bring_up_to(
    cached: Path, fleet: str, now: datetime, say: Say, progress: SeedProgress | None
) -> tuple[Outcome, int]:
    if cached.exists():
        store = Store(cached)
        try:
            end = store.history_end() if store.schema_version() == SCHEMA_VERSION else None
            if end is not None and end <= now <= end + MAX_CONTINUED:
                if now - end < store.fleet_config().bucket:
                    return Outcome.REUSED, 0
                say(f"bringing the cached store up to now ({_hours(now - end)} of new buckets)")
                added = store.extend(load_fleet(fleet, end_at=end), now, progress)
                store.checkpoint()
                return Outcome.CONTINUED, added
        finally:
            store.close()
        _unlink(
            cached
        )  # too old, from the future, or from before history_end was kept: seed it again
    return Outcome.SEEDED, _seed(cached, fleet, now, say, progress)


def _seed(cached: Path, fleet: str, now: datetime, say: Say, progress: SeedProgress | None) -> int:
    temp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
    loaded = load_fleet(fleet, end_at=now)
    say(
        f"seeding the store of fleet {loaded.name!r}: {len(loaded.registry.models):,} models, "
        f"{len(loaded.timeline):,} hours each (kept for the next start)"
    )
    store = Store(temp)
    try:
        store.migrate()
        count = store.seed(loaded, progress)
        store.checkpoint()
    except BaseException:
        store.close()
        _unlink(temp)
        raise
    store.close()
    _sync(temp)
    os.replace(temp, cached)
    _sync(cached.parent)
    return count


@contextmanager
def _locked(lock: Path, say: Say) -> Iterator[None]:
    with open(lock, "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("another fleetdesk is preparing the same store; waiting for it")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_leftovers(folder: Path, name: str, keep: set[Path]) -> None:
    """This fleet's stores and spares of other keys, and temporary files of crashed seeds and copies (we hold
    its lock)."""
    for path in folder.iterdir():
        if (
            _STORE_NAME.fullmatch(path.name)
            and path.name.lstrip(".").startswith(f"{name}-")
            and path not in keep
        ):
            path.unlink(missing_ok=True)


def _unlink(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _hours(span: timedelta) -> str:
    hours = span / timedelta(hours=1)
    return (
        f"{hours:.0f} hour{'s' if round(hours) != 1 else ''}"
        if hours < 48
        else f"{hours / 24:.0f} days"
    )
