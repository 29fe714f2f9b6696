"""A host at the far end of a link this machine can cut: a network namespace joined to ours by a veth pair.

Cutting the link (taking the far end down) drops every packet in both directions without a reset, as a
database host that dies, or a network that partitions, does: what loopback cannot show, where a stopped
server's kernel still answers. Needs root and iproute2's `ip`; tests skip where they cannot make one."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

NEAR, FAR = "10.213.0.1", "10.213.0.2"


def _ip(*arguments: str) -> None:
    subprocess.run(["ip", *arguments], check=True, capture_output=True, text=True, timeout=30)


class FarHost:
    def __init__(self, netns: str, link: str) -> None:
        self.netns, self.address = netns, FAR
        self._link = link
        """The far end of the veth pair, inside ``netns``."""

    @contextmanager
    def cut_off(self) -> Iterator[None]:
        """No packet reaches the far host or comes back from it until the block ends."""
        _ip("netns", "exec", self.netns, "ip", "link", "set", self._link, "down")
        try:
            yield
        finally:
            _ip("netns", "exec", self.netns, "ip", "link", "set", self._link, "up")


@contextmanager
def far_host() -> Iterator[FarHost]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("a network namespace needs root and iproute2's ip")
    netns = f"fleetdesk{os.getpid()}"
    near, far = f"fdn{os.getpid()}", f"fdf{os.getpid()}"
    try:
        _ip("netns", "add", netns)
    except subprocess.CalledProcessError as error:
        pytest.skip(f"cannot make a network namespace here: {error.stderr.strip()}")
    try:
        _ip("link", "add", near, "type", "veth", "peer", "name", far)
        _ip("link", "set", far, "netns", netns)
        _ip("addr", "add", f"{NEAR}/30", "dev", near)
        _ip("link", "set", near, "up")
        _ip("netns", "exec", netns, "ip", "addr", "add", f"{FAR}/30", "dev", far)
        _ip("netns", "exec", netns, "ip", "link", "set", far, "up")
        _ip("netns", "exec", netns, "ip", "link", "set", "lo", "up")
        yield FarHost(netns, far)
    finally:
        _ip("netns", "delete", netns)  # takes the veth pair with it
