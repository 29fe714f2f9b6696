"""``python peak_rss.py ARGS...``: run ``fleetdesk ARGS...`` and, at exit, write its peak resident set in
bytes (VmHWM) to the file named by $PEAK_RSS_FILE.

wait4's ru_maxrss cannot be used: Linux folds the forking parent's resident set (here, pytest's) into the
child's across exec, so a small command looks as big as the test runner.
"""

import atexit
import os
import runpy
import sys
from pathlib import Path


def _write_peak() -> None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            Path(os.environ["PEAK_RSS_FILE"]).write_text(str(int(line.split()[1]) * 1024))


atexit.register(_write_peak)
sys.argv = ["fleetdesk", *sys.argv[1:]]
runpy.run_module("fleetdesk.cli", run_name="__main__")
