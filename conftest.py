"""Tests run offline: every socket may talk to loopback only.

A test that reaches for the network (a forgotten real client, a DNS lookup)
fails loudly instead of passing on a developer's machine and hanging in CI.
The wire tests' local Chat Completions server on 127.0.0.1 is allowed.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

# Fixtures more than one chapter's tests use (by name, e.g. "isolated").
pytest_plugins = ["chapters.ch03.tests.support"]

LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


class NetworkBlockedError(OSError):
    pass


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            raise NetworkBlockedError(f"tests are offline: connection to {address!r} blocked")
        return real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_loopback(host):
            # What a DNS failure looks like, so code under test handles it as one.
            raise socket.gaierror(
                socket.EAI_NONAME, f"tests are offline: lookup of {host!r} blocked"
            )
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
