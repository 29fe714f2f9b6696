"""Every command-line mistake is one line on stderr naming what is wrong, never a traceback, and exits 2 for a
usage mistake (1 when the command ran and failed), whatever the subcommand and whatever the mistake."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fleetdesk.server.store import Store

SNAPSHOT_V1 = Path(__file__).parents[1] / "snapshot" / "fixtures" / "snapshot-v1.json"
NOT_UTF8 = b"ana\xff\xfe"


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mistakes")
    (root / "a-directory").mkdir()
    (root / "not-a-db.sqlite").write_text("these are my notes, not a database\n")
    (root / "a-file").write_text("x")
    Store(root / "fleetdesk.sqlite").migrate()
    configs = {
        "config-syntax": "poll_seconds = = 3\n",
        "config-type": 'poll_seconds = "soon"\n',
        "config-inf": "poll_seconds = inf\n",
        "config-keymap": "keymap = 3\n",
        "config-negative": "stale_after_seconds = -5\n",
        "config-binary": None,
    }
    for name, text in configs.items():
        folder = root / name / "fleetdesk"
        folder.mkdir(parents=True)
        if text is None:
            (folder / "config.toml").write_bytes(b"\xff\xfe\x00garbage")
        else:
            (folder / "config.toml").write_text(text)
    return {"root": root, **{name: root / name for name in configs}}


def _mistakes(p: dict[str, Path]) -> list[tuple[str, list[str | bytes], int, str | None]]:
    """(what, argv, expected exit code, config folder): members of the class for every subcommand."""
    root = p["root"]
    db, directory, not_db = (
        str(root / "fleetdesk.sqlite"),
        str(root / "a-directory"),
        str(root / "not-a-db.sqlite"),
    )
    under_a_file = str(root / "a-file" / "x.sqlite")
    token = ["token", "create", "--db", db, "--role", "viewer"]
    mistakes: list[tuple[str, list[str | bytes], int, str | None]] = [
        ("no subcommand", [], 2, None),
        ("unknown subcommand", ["fly"], 2, None),
        *(
            (f"{command} unknown option", [*command.split(), "--no-such-option"], 2, None)
            for command in (
                "explain m",
                "fleet validate small",
                "serve",
                "token list --db " + db,
                "console",
                "drill",
                "snapshot export --server http://x --model m",
                "open x.json",
                "rules recording",
            )
        ),
        ("serve port too high", ["serve", "--port", "99999"], 2, None),
        ("serve port negative", ["serve", "--port", "-1"], 2, None),
        ("serve port words", ["serve", "--port", "eighty"], 2, None),
        ("serve now past the calendar", ["serve", "--now", "9999-12-31T23:00:00-05:00"], 2, None),
        ("serve now naive", ["serve", "--now", "2026-01-01T00:00:00"], 2, None),
        ("serve now words", ["serve", "--now", "tomorrow"], 2, None),
        ("serve db is a directory", ["serve", "--db", directory, "--port", "0"], 2, None),
        ("serve db is not a database", ["serve", "--db", not_db, "--port", "0"], 2, None),
        ("serve db under a file", ["serve", "--db", under_a_file, "--port", "0"], 1, None),
        (
            "serve fleet missing",
            [
                "serve",
                "--fleet",
                str(root / "nope.json"),
                "--db",
                str(root / "new.sqlite"),
                "--port",
                "0",
            ],
            2,
            None,
        ),
        ("serve timeout inf", ["serve", "--prometheus-timeout", "inf"], 2, None),
        ("serve alert ttl nan", ["serve", "--alert-ttl", "nan"], 2, None),
        ("serve lag negative", ["serve", "--prometheus-lag", "-1"], 2, None),
        ("serve log level", ["serve", "--log-level", "loud"], 2, None),
        (
            "serve demo off loopback",
            ["serve", "--demo", "--host", "0.0.0.0", "--port", "0"],
            2,
            None,
        ),
        ("token expires huge", [*token, "--user", "ana", "--expires-in", "9999999d"], 2, None),
        ("token expires zero", [*token, "--user", "ana", "--expires-in", "0m"], 2, None),
        ("token expires years", [*token, "--user", "ana", "--expires-in", "1y"], 2, None),
        ("token user not UTF-8", [*token, "--user", NOT_UTF8], 2, None),
        ("token user escape", [*token, "--user", "ana\x1b[31m"], 2, None),
        (
            "token team not UTF-8",
            ["token", "create", "--db", db, "--role", "oncall", "--user", "a", "--team", NOT_UTF8],
            2,
            None,
        ),
        (
            "token oncall without team",
            ["token", "create", "--db", db, "--role", "oncall", "--user", "a"],
            2,
            None,
        ),
        ("token role", [*token[:-1], "boss", "--user", "a"], 2, None),
        (
            "token db is a directory",
            ["token", "create", "--db", directory, "--role", "viewer", "--user", "a"],
            2,
            None,
        ),
        ("token db is not a database", ["token", "list", "--db", not_db], 2, None),
        (
            "token db URL's port",
            ["token", "list", "--db", "postgresql://u:pw@db:99999/fleet"],
            2,
            None,
        ),
        (
            "serve db URL's bracket",
            ["serve", "--db", "postgresql://u:pw@[::1/fleet", "--port", "0"],
            2,
            None,
        ),
        (
            "token revoke db not a database",
            ["token", "revoke", "--db", not_db, "--user", "a"],
            2,
            None,
        ),
        (
            "token revoke user not UTF-8",
            ["token", "revoke", "--db", db, "--user", NOT_UTF8],
            2,
            None,
        ),
        (
            "snapshot incident negative",
            ["snapshot", "export", "--server", "http://x", "--model", "m", "--incident", "-1"],
            2,
            None,
        ),
        (
            "snapshot incident huge",
            ["snapshot", "export", "--server", "http://x", "--model", "m", "--incident", "9" * 40],
            2,
            None,
        ),
        (
            "snapshot window",
            ["snapshot", "export", "--server", "http://x", "--model", "m", "--window", "2h"],
            2,
            None,
        ),
        (
            "snapshot model not UTF-8",
            ["snapshot", "export", "--server", "http://x", "--model", NOT_UTF8],
            2,
            None,
        ),
        (
            "snapshot server not a URL",
            ["snapshot", "export", "--server", "nowhere", "--model", "m"],
            2,  # a usage mistake, refused by the argument type (fleetdesk.domain.urls)
            None,
        ),
        ("explain model not UTF-8", ["explain", NOT_UTF8], 2, None),
        ("explain fleet missing", ["explain", "m", "--fleet", str(root / "nope.json")], 2, None),
        (
            "fleet models too few",
            ["fleet", "generate", "--models", "3", "--out", str(root / "f.json")],
            2,
            None,
        ),
        (
            "fleet models too many",
            ["fleet", "generate", "--models", "1000000000", "--out", str(root / "f.json")],
            2,
            None,
        ),
        (
            "fleet seed negative",
            ["fleet", "generate", "--models", "4", "--seed", "-1", "--out", "f.json"],
            2,
            None,
        ),
        (
            "fleet name escape",
            ["fleet", "generate", "--models", "4", "--name", "\x1b]52;c;x\x07", "--out", "f"],
            2,
            None,
        ),
        (
            "fleet out is a directory",
            ["fleet", "generate", "--models", "4", "--out", directory],
            1,
            None,
        ),
        (
            "fleet validate not UTF-8 file",
            ["fleet", "validate", str(root / "not-a-db.sqlite")],
            1,
            None,
        ),
        ("drill speed inf", ["drill", "stale-feed", "--speed", "inf"], 2, None),
        ("drill speed nan", ["drill", "stale-feed", "--speed", "nan"], 2, None),
        ("drill speed zero", ["drill", "stale-feed", "--speed", "0"], 2, None),
        ("drill no such scenario", ["drill", "no-such-drill"], 2, None),
        ("drill headless without script", ["drill", "stale-feed", "--headless"], 2, None),
        ("rules kind", ["rules", "everything"], 2, None),
        ("rules fleet missing", ["rules", "alerts", "--fleet", str(root / "nope.json")], 2, None),
        *(
            (
                f"serve prometheus selector {selector!r}",
                ["serve", "--db", db, "--metrics-source", "prometheus"]
                + ["--prometheus-url", "http://127.0.0.1:9", "--prometheus-selector", selector],
                2,
                None,
            )
            for selector in ("job=fleetdesk", 'job="x"} or vector(1) or up{a="b"')
        ),
        ("open missing file", ["open", str(root / "nope.json")], 2, None),
        ("open not a snapshot", ["open", not_db], 2, None),
    ]
    # Every kind of bad config file through the console; the other commands that read it share load_settings.
    for config in (
        "config-syntax",
        "config-type",
        "config-inf",
        "config-keymap",
        "config-negative",
        "config-binary",
    ):
        mistakes.append(
            (f"console {config}", ["console", "--server", "http://127.0.0.1:9"], 2, config)
        )
    mistakes += [
        ("open config-type", ["open", str(SNAPSHOT_V1)], 2, "config-type"),
        ("drill config-inf", ["drill", "stale-feed"], 2, "config-inf"),
    ]
    return mistakes


def _run(
    argv: list[str | bytes], config: Path | None, cwd: Path
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "FLEETDESK_TOKEN": "fdk_" + "t" * 40, "XDG_DATA_HOME": str(cwd / "data")}
    env["XDG_CONFIG_HOME"] = str(config) if config is not None else str(cwd / "no-config")
    return subprocess.run(
        [sys.executable, "-m", "fleetdesk.cli", *argv],
        capture_output=True,
        timeout=60,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_every_cli_mistake_is_one_line_with_its_exit_code(places: dict[str, Path]) -> None:
    mistakes = _mistakes(places)
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(
            pool.map(lambda m: _run(m[1], places[m[3]] if m[3] else None, places["root"]), mistakes)
        )
    wrong = []
    for (what, _argv, code, _), done in zip(mistakes, runs, strict=True):
        err = done.stderr.decode("utf-8", "replace")
        one_line = err.count("\n") == 1 and err.startswith("fleetdesk") and "Traceback" not in err
        if (
            done.returncode != code
            or not one_line
            or b"\x1b" in done.stderr
            or b"\xff" in done.stderr
        ):
            wrong.append(f"{what}: exit {done.returncode} (want {code}): {err!r}"[:400])
    assert not wrong, "\n".join(wrong)
    print(f"{len(mistakes)} command-line mistakes, each one line")


# A URL fleetdesk is told to talk to, or prints into a Prometheus rule file: each flag (and config key) that takes
# one refuses a member of the class at start-up, naming the URL, instead of failing at the first escalation or
# writing a line break or a Prometheus template (executed in an annotation) into the rule file.
BAD_URLS = [
    "ftp://prometheus:9090",
    "http://[::1",
    "javascript:alert(1)",
    "http://am:99999",
    'http://x/{{ query "up" }}',
    "http://x\n- alert: Injected",
    "http://x y",
    "file:///etc/passwd",
]
URL_FLAGS = [
    ["serve", "--db", "{db}", "--metrics-source", "prometheus", "--prometheus-url"],
    ["serve", "--db", "{db}", "--alertmanager-url"],
    ["serve", "--db", "{db}", "--webhook-url"],
    ["rules", "alerts", "--server-url"],
    ["console", "--server"],
    ["snapshot", "export", "--model", "m", "--server"],
]


def test_every_url_flag_refuses_what_is_not_an_http_url(places: dict[str, Path]) -> None:
    db = str(places["root"] / "fleetdesk.sqlite")
    runs = [
        ([part.format(db=db) for part in URL_FLAGS[index % len(URL_FLAGS)]], bad)
        for index, bad in enumerate(BAD_URLS)
    ] + [
        ([part.format(db=db) for part in flag], BAD_URLS[0]) for flag in URL_FLAGS[len(BAD_URLS) :]
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda run: _run([*run[0], run[1]], None, places["root"]), runs))
    wrong = []
    for (argv, bad), result in zip(runs, done, strict=True):
        err = result.stderr.decode("utf-8", "replace")
        if result.returncode != 2 or err.count("\n") != 1 or "expected a URL like" not in err:
            wrong.append(f"{argv[:2]} {bad!r}: exit {result.returncode}: {err!r}"[:300])
    assert not wrong, "\n".join(wrong)
    rules = _run(
        ["rules", "alerts", "--server-url", "https://fd.example:8443/x"], None, places["root"]
    )
    assert rules.returncode == 0 and b"--server https://fd.example:8443/x " in rules.stdout


@pytest.mark.parametrize("kind", ["recording", "alerts"])
def test_a_fleet_path_cannot_write_into_the_rule_file(places: dict[str, Path], kind: str) -> None:
    """The header names the fleet's path in a comment; a line break in the name (a file may have one) must not end
    the comment and start YAML of its own."""
    import shutil

    import yaml

    path = places["root"] / "x\ngroups: []\n# "
    shutil.copy(Path(__file__).parents[2] / "fixtures" / "fleets" / "small.json", path)
    done = _run(["rules", kind, "--fleet", str(path)], None, places["root"])
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert all(line.startswith("#") for line in text.splitlines()[:2]), text[:300]
    rules = yaml.safe_load(text)
    assert list(rules) == ["groups"] and rules["groups"], text[:300]
