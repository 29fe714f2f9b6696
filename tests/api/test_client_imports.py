"""What importing the client loads: the console starts on it, so it must not pull in tools it never runs."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_client_leaves_out_httpx_command_line_tool():
    # click comes with uvicorn, so httpx would import its CLI (click, pygments, rich.syntax) at start-up.
    code = (
        "import sys, fleetdesk.client, httpx\n"
        "print(sorted(name for name in ('click', 'pygments', 'httpx._main') if sys.modules.get(name)))\n"
        "print(callable(httpx.main))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:2] == ["[]", "True"]
