"""Where the Dask scheduler is, and how the client reaches it safely.

A Dask client can run any code on the cluster's workers, and anyone who reaches a
scheduler's port is such a client: on a plain ``tcp://`` address nothing is
authenticated or encrypted. ``tls://`` is Dask's mutual TLS: every endpoint shows
a certificate signed by the cluster's CA (``--tls-ca``, ``--tls-cert``,
``--tls-key``, or ``distributed.comm.tls.*`` in the Dask configuration). Addresses
are checked here before Dask sees them, so a typo is one line, and a TCP probe
says at once (not after the 30 s connect timeout) that nothing listens there.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Protocols the harness speaks to a scheduler.
SCHEMES = ("tcp", "tls")
#: Seconds the TCP probe waits for the scheduler's port to accept a connection.
PROBE_SECONDS = 5.0


class AddressError(ValueError):
    """A scheduler address or TLS setting that cannot work: one line,
    ``--scheduler ADDRESS: reason`` (``reason`` alone as an attribute)."""

    def __init__(self, shown: str, reason: str) -> None:
        super().__init__(f"{shown}: {reason}" if shown else reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Address:
    """A checked scheduler address."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


@dataclass(frozen=True, slots=True)
class TLSFiles:
    """The client's TLS files (``key`` None: the certificate file holds it)."""

    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    def __bool__(self) -> bool:
        return any((self.ca, self.cert, self.key))


def parse_address(text: str) -> Address:
    """``tcp://HOST:PORT`` or ``tls://HOST:PORT`` (``HOST:PORT``: tcp) as an
    Address; AddressError saying what is wrong."""
    shown = f"--scheduler {text!r}"
    text = text.strip()
    if not text:
        raise AddressError(shown, "empty; give tcp://HOST:PORT or tls://HOST:PORT")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in SCHEMES:
        raise AddressError(
            shown, f"unknown protocol {scheme + '://'!r} (use tcp:// or tls://)"
        )
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or "/" in rest:
        raise AddressError(shown, f"expected {scheme}://HOST:PORT")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise AddressError(shown, f"port {port!r} is not a number from 1 to 65535")
    return Address(scheme, host, int(port))


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback (a name: every address it
    resolves to is)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(
        ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos
    )


def plain_warning(address: Address) -> str | None:
    """One line when the client talks to a scheduler off this machine without
    TLS (None otherwise)."""
    if address.scheme != "tcp" or address.loopback:
        return None
    return (
        f"--scheduler {address}: plain tcp to another machine, neither encrypted "
        "nor authenticated: anyone who can reach that port can run code on the "
        "workers; use tls:// with --tls-ca/--tls-cert/--tls-key (see the Dask "
        "page of the docs)"
    )


def security_for(
    address: Address, tls: TLSFiles = TLSFiles(), security: Any = None
) -> Any:
    """The ``distributed.Security`` of a client of ``address``: ``security`` as
    given, else built from ``tls``, else Dask's configuration; None for tcp://.
    AddressError when a tls:// address has no certificates, a file is missing,
    or TLS files are given for a tcp:// address."""
    if address.scheme == "tcp":
        if tls or security is not None:
            raise AddressError(
                f"--scheduler {address}", "TLS certificates need a tls:// address"
            )
        return None
    from distributed import Security

    if security is not None:
        return security
    if tls:
        for flag, path in (("--tls-ca", tls.ca), ("--tls-cert", tls.cert)):
            if path is None:
                raise AddressError(f"--scheduler {address}", f"{flag} is missing")
        for flag, path in (("--tls-ca", tls.ca), ("--tls-cert", tls.cert),
                           ("--tls-key", tls.key)):  # fmt: skip
            if path is not None and not Path(path).is_file():
                raise AddressError(f"{flag} {path}", "no such file")
        return Security(
            tls_ca_file=str(tls.ca),
            tls_client_cert=str(tls.cert),
            tls_client_key=None if tls.key is None else str(tls.key),
            require_encryption=True,
        )
    configured = Security()  # distributed.comm.tls.* of the Dask configuration
    if not (configured.tls_ca_file and configured.tls_client_cert):
        raise AddressError(
            f"--scheduler {address}",
            "tls:// needs the cluster's CA and a client certificate: --tls-ca, "
            "--tls-cert (and --tls-key), or distributed.comm.tls.ca-file and "
            ".client.cert in the Dask configuration",
        )
    return configured


def probe(address: Address, timeout: float = PROBE_SECONDS) -> None:
    """AddressError at once when nothing accepts connections at ``address``."""
    try:
        with socket.create_connection((address.host, address.port), timeout=timeout):
            pass
    except OSError as err:
        why = err.strerror or type(err).__name__
        if isinstance(err, TimeoutError):
            why = f"no answer within {timeout:g} s"
        shown = f"--scheduler {address}"
        raise AddressError(shown, f"cannot connect ({why})") from None
