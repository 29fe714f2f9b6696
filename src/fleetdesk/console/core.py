"""The console app itself, without its handoff key: what the live console and a reopened snapshot share."""

from __future__ import annotations

import asyncio
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from pydantic import SecretStr
from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.filter import LineFilter
from textual.markup import escape
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from fleetdesk.client import ClientTimeouts, ConnectionUpdate, FleetdeskClient, Unauthorized
from fleetdesk.console import textual_seam
from fleetdesk.console.ascii import KEY_NAMES, AsciiOnly
from fleetdesk.console.connection import Link
from fleetdesk.console.glyphs import ASCII, UNICODE, Glyphs
from fleetdesk.console.messages import LinkChanged, LiveEvent, ModelViewFetched
from fleetdesk.console.model_view import fetch_model_view
from fleetdesk.console.outcomes import explain
from fleetdesk.console.themes import load_themes
from fleetdesk.console.typed_ahead import TypedKey
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.wire import AccessRole, ClockEventData, ServerInfo, WhoAmI, Window

_EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
HANGUP_CHECK_SECONDS = 1.0


@dataclass(frozen=True)
class Backend:
    """Where the backend is and how to sign in (the token stays a SecretStr)."""

    url: str
    token: SecretStr | None = None
    label: str = ""
    timeouts: ClientTimeouts = ClientTimeouts()


class ConsoleApp(App[None]):
    """On-call console: fleet view first, a model one Enter away, playbook actions one key away.

    ``console.app.FleetdeskApp`` is the live console (this, plus the snapshot key); a reopened snapshot is
    ``console.snapshot.app.SnapshotConsole`` (this, over frozen data).
    """

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses in other folders keep it
    TITLE = "fleetdesk"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding(
            "ctrl+q",
            "quit",
            "Quit now",
            id="quit-now",
            tooltip="Quit at once, without asking.",
            show=False,
            priority=True,
        ),
        Binding("q", "request_quit", "Quit", id="quit", tooltip="Quit after confirming."),
        Binding(
            "question_mark", "help", "Keys", id="help", tooltip="List every key of this screen."
        ),
    ]

    def __init__(
        self,
        backend: Backend,
        settings: ConsoleSettings | None = None,
        on_started: Callable[[], None] | None = None,
    ) -> None:
        """``on_started`` is called once, when the first fleet fetch has ended (its page painted, or failed)."""
        super().__init__()
        self._on_started = on_started
        self.seam = textual_seam.install()
        """Which of the slow-link patches to Textual's internals took (all of them on the pinned Textual)."""
        self.settings = settings or ConsoleSettings()
        self.backend = backend
        self.glyphs: Glyphs = ASCII if self.settings.ascii else UNICODE
        self._ascii_only = AsciiOnly(enabled=self.settings.ascii)
        self.link = Link(stale_after=self.settings.stale_after_seconds)
        self._link_words: tuple[str, bool] | None = None
        self._link_connected = True
        self.client = FleetdeskClient(backend.url, backend.token, timeouts=backend.timeouts)
        self.me: WhoAmI | None = None
        self._live_started = False
        self._live_while_opening = False
        self._typed_again: set[events.Key] = set()
        """Keys delivered a second time (typed ahead of their dialog): one keystroke each, not two."""
        self.chart_window = Window.H24
        """The window the charts were last switched to: the next model view opens with it (comparing models)."""
        self.info: ServerInfo | None = None
        self._info_at = 0.0
        """time.monotonic() when ``info.now`` was the server's time."""
        self.theme_problems: list[str] = []
        themes, self.theme_problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        else:
            self.theme_problems.append(f"unknown theme {self.settings.theme!r}; using the default")
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)

    # --- life cycle -----------------------------------------------------------

    @property
    def can_act(self) -> bool:
        """Action keys exist at all: not read-only and not a viewer token."""
        if self.settings.read_only:
            return False
        return self.me is None or self.me.role is not AccessRole.VIEWER

    async def on_mount(self) -> None:
        await self.client.__aenter__()
        if not self.is_headless and threading.current_thread() is threading.main_thread():
            # A closed SSH session (SIGHUP) or a kill (SIGTERM) ends the console as q would: the terminal is
            # restored and an embedded backend removes its database copy.
            loop = asyncio.get_running_loop()
            for signum in _EXIT_SIGNALS:
                loop.add_signal_handler(signum, self.exit)
            # A terminal can also go away with no signal (its pty closed by a program that never made it our
            # controlling terminal): Textual's input thread then reads end-of-file in a loop, at half a core,
            # for ever. The hang-up is checked for here and ends the console the same way.
            if sys.__stdin__ is not None and sys.__stdin__.isatty():
                self.set_interval(
                    HANGUP_CHECK_SECONDS, partial(self._exit_on_hangup, sys.__stdin__.fileno())
                )
        from fleetdesk.console.screens.fleet import FleetScreen, ask_first_page

        first_page = ask_first_page(self.client)

        for problem in self.theme_problems:
            self.notify(problem, severity="warning", markup=False)
        if not self.seam.complete:
            self.notify(
                self.seam.describe(),
                title="slow-link drawing off",
                severity="warning",
                markup=False,
            )
        await self.push_screen(
            FleetScreen(first_page)
        )  # its first fetch calls start_live when it has ended

    def _exit_on_hangup(self, terminal: int) -> None:
        poller = select.poll()
        poller.register(terminal, select.POLLHUP)
        if any(events & select.POLLHUP for _, events in poller.poll(0)):
            self.exit()

    def start_live(self) -> None:
        """Who we are and the live feed, started once the first fleet fetch has ended (shown or failed):
        on a slow link the worst models then paint first instead of queueing behind these requests."""
        if self._live_started:
            return
        self._live_started = True
        if self._on_started is not None:
            self._on_started()
        self.identify()
        self.follow_events()

    async def on_unmount(self) -> None:
        if not self.is_headless and threading.current_thread() is threading.main_thread():
            for signum in _EXIT_SIGNALS:
                asyncio.get_running_loop().remove_signal_handler(signum)
        await self.client.__aexit__(None, None, None)

    @work(exclusive=True, group="identity", exit_on_error=False)
    async def identify(self) -> None:
        """Who we are and what the server is (action keys depend on the role)."""
        self.info, self._info_at = await self.client.info(), time.monotonic()
        self.me = await self.client.me()
        self.refresh_bindings()
        for screen in self.screen_stack:
            screen.refresh_bindings()

    @work(exclusive=True, group="live", exit_on_error=False)
    async def follow_events(self) -> None:
        """Read the live feed for the app's life; the feed itself reconnects with backoff."""
        async for update in self.client.events():
            if isinstance(update, ConnectionUpdate):
                self.link.feed_changed(update)
                self.link_changed()
            else:
                self.post_message(LiveEvent(update))

    def server_now(self) -> datetime | None:
        """The server's time now, for 'ago': a frozen clock moves only by clock events, a real one with ours."""
        if self.info is None:
            return None
        if self.info.clock_frozen:
            return self.info.now
        return self.info.now + timedelta(seconds=time.monotonic() - self._info_at)

    # --- opening a model --------------------------------------------------------

    def open_model(self, model_id: str) -> None:
        """Show a model's view once all of it is fetched: it paints once, whole. Pushed first, it painted
        a skeleton, then the same again (~30 KB a slow link carries before the data can follow)."""
        self._live_while_opening = False
        self.screen.query_one(StatusLine).busy(f"opening {model_id}…")
        self._fetch_model_view(model_id, self.screen)

    @work(exclusive=True, group="open-model", exit_on_error=False)
    async def _fetch_model_view(self, model_id: str, opener: Screen) -> None:
        loaded = await fetch_model_view(self, model_id, self.chart_window)
        self.post_message(ModelViewFetched(loaded, opener))

    def on_model_view_fetched(self, message: ModelViewFetched) -> None:
        from fleetdesk.console.screens.model import ModelScreen

        message.opener.query_one(StatusLine).busy("")
        if self.screen is message.opener:  # not if the engineer went elsewhere meanwhile
            self.push_screen(
                ModelScreen(
                    message.loaded.detail.model.id, message.loaded, behind=self._live_while_opening
                )
            )

    def on_live_event(self, message: LiveEvent) -> None:
        # A model view being fetched may already be behind this event: it loads again once shown.
        self._live_while_opening = True
        if isinstance(message.update.data, ClockEventData) and self.info is not None:
            self.info, self._info_at = (
                self.info.model_copy(update={"now": message.update.data.now}),
                time.monotonic(),
            )
        for screen in self.screen_stack:
            screen.post_message(LiveEvent(message.update))
        self.data_arrived()

    def link_changed(self) -> None:
        """Tell the screens when the link's words change; re-check keys only when connectivity flips."""
        words = self.link.describe()
        if words != self._link_words:
            self._link_words = words
            for screen in self.screen_stack:
                screen.post_message(LinkChanged())
        if self.link.connected != self._link_connected:
            self._link_connected = self.link.connected
            for screen in self.screen_stack:
                screen.refresh_bindings()  # actions wait for the server
                if self.link.connected and hasattr(screen, "refetch"):
                    screen.refetch()  # whatever changed while we were away
            if self.link.connected:
                self.notify("reconnected", markup=False)

    def data_arrived(self) -> None:
        self.link.data_arrived()
        self.link_changed()

    def read_failed(self) -> None:
        self.link.read_failed()
        self.link_changed()
        self.start_live()  # the feed is what notices the server coming back

    # --- failures -------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.worker_state_changed(event)

    def worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place background failures become notices."""
        if event.state is not WorkerState.ERROR:
            return
        if event.worker.group == "open-model":
            for screen in self.screen_stack:
                if screen.query(StatusLine):
                    screen.query_one(StatusLine).busy(
                        ""
                    )  # no longer opening; the notice below says why
        error = event.worker.error
        assert error is not None
        title, message = explain(error)
        group = event.worker.group
        node = event.worker.node
        handler = getattr(node, "worker_failed", None)
        if handler is not None and handler(event.worker, error):
            return  # the screen shows this failure in its own place
        if group in ("live", "identity") and isinstance(error, Unauthorized):
            self.notify(message, title=title, severity="error", timeout=30, markup=False)
            return
        if group == "live":
            # The feed only ends on auth failures or a bug; keep the console usable and try again later.
            self.set_timer(5.0, self.follow_events)
        if group == "identity":
            self.set_timer(5.0, self.identify)
        self.notify(message, title=title, severity="error", markup=False)

    # --- drawing --------------------------------------------------------------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A notice on one line, in the status line's row (app.tcss places it): over the charts' newest
        buckets, a dialog's buttons or the scorecard, Textual's four-line toasts hid the work at 80x24.
        The newest notice replaces the one before."""
        if title:
            # "not signed in (401): not signed in: the server refused…" says it twice in a line it needs.
            said = title.split(" (")[0]
            if message.startswith(f"{said}:"):
                message = message[len(said) + 1 :].lstrip()
            message = f"{escape(title) if markup else title}: {message}"
        self.clear_notifications()
        super().notify(message, severity=severity, timeout=timeout, markup=markup)

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters (NO_COLOR), then, with --ascii, every character as ASCII (console.ascii)."""
        return [
            *super().get_line_filters(),
            *([self._ascii_only] if self._ascii_only.enabled else []),
        ]

    def get_key_display(self, binding: Binding) -> str:
        """Textual's key names, with --ascii its symbols (arrows, enter) as words."""
        display = super().get_key_display(binding)
        if self.settings.ascii and not display.isascii():
            for symbol, word in KEY_NAMES.items():
                display = display.replace(symbol, word)
        return display

    # --- keys -----------------------------------------------------------------

    def type_again(self, keys: Sequence[TypedKey]) -> None:
        """Deliver keys typed before their dialog opened, through the app as the terminal's keys go: a Tab
        among them then moves the focus before the next key is read."""
        for key in keys:
            event = events.Key(key.key, key.character)
            self._typed_again.add(event)
            self.post_message(event)

    def typed_again(self, event: events.Event) -> bool:
        """``event`` is a key delivered a second time by ``type_again``."""
        return event in self._typed_again

    async def on_event(self, event: events.Event) -> None:
        await super().on_event(event)
        if isinstance(event, events.Key):
            self._typed_again.discard(event)

    def action_request_quit(self) -> None:
        from fleetdesk.console.screens.quit import QuitScreen

        def quit_if(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(QuitScreen(), quit_if)

    def action_help(self) -> None:
        from fleetdesk.console.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every enabled key of the current screen, then one command per theme."""
        for _key, active in screen.active_bindings.items():
            binding = active.binding
            if (
                not active.enabled
                or not binding.description
                or binding.action in ("command_palette",)
            ):
                continue
            yield SystemCommand(
                f"{binding.description} ({self.get_key_display(binding)})",
                binding.tooltip or binding.description,
                partial(self._run_binding, active.node, binding.action),
            )
        for name in sorted(self.available_themes):
            if name.startswith("fleetdesk-") or name in self.settings.theme:
                yield SystemCommand(
                    f"Theme: {name}", f"Switch to the {name} theme", partial(self._set_theme, name)
                )
        yield SystemCommand("Theme…", "Pick any theme", self.action_change_theme)
        yield SystemCommand("Quit", "Quit the console", self.action_request_quit)

    async def _run_binding(self, node, action: str) -> None:  # type: ignore[no-untyped-def]
        await self.run_action(action, node)

    def _set_theme(self, name: str) -> None:
        self.theme = name

    def watch_theme(self, name: str) -> None:
        for screen in self.screen_stack:
            restyle = getattr(screen, "restyle", None)
            if restyle is not None:
                restyle()
