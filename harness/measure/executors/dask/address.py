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
import re
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.numbers import NumberError, parse_int

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
    if rest.startswith("["):  # an IPv6 literal: [HOST]:PORT
        host, bracket, tail = rest[1:].partition("]")
        colon, port = tail[:1], tail[1:]
        if not bracket or colon != ":" or not _is_ipv6(host):
            raise AddressError(shown, f"expected {scheme}://[IPV6]:PORT, e.g. "
                               f"{scheme}://[::1]:8786")  # fmt: skip
    else:
        host, colon, port = rest.rpartition(":")
        if ":" in host:
            raise AddressError(shown, f"an IPv6 address goes in brackets: "
                               f"{scheme}://[{host}]:{port}")  # fmt: skip
        if not colon or not host or not _HOST.fullmatch(host):
            raise AddressError(shown, f"expected {scheme}://HOST:PORT")
    try:
        number = parse_int(port, "port", minimum=1, maximum=65535)
    except NumberError:
        raise AddressError(
            shown, f"port {port!r} is not a number from 1 to 65535"
        ) from None
    return Address(scheme, host, number)


#: A host name or IPv4 address (IPv6 literals go in brackets).
_HOST = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?")


def _is_ipv6(host: str) -> bool:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return False
    return True


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


def probe(
    address: Address, timeout: float = PROBE_SECONDS, answer_timeout: float = 0.0
) -> None:
    """AddressError at once when nothing accepts connections at ``address``; on
    tcp://, with ``answer_timeout``, also when what accepts them does not greet
    like a Dask scheduler within that many seconds (see :func:`_greeting`)."""
    shown = f"--scheduler {address}"
    try:
        with socket.create_connection(
            (address.host, address.port), timeout=timeout
        ) as conn:
            if address.scheme == "tcp" and answer_timeout > 0:
                problem = _greeting(conn, answer_timeout)
                if problem:
                    raise AddressError(shown, problem)
    except OSError as err:
        why = err.strerror or type(err).__name__
        if isinstance(err, TimeoutError):
            why = f"no answer within {timeout:g} s"
        raise AddressError(shown, f"cannot connect ({why})") from None


#: Largest first message taken for a Dask handshake (a few hundred bytes of
#: msgpack); Dask itself allocates whatever the first 8 bytes say, so an SSH or
#: HTTP banner there made it ask for exbibytes (MemoryError).
MAX_GREETING = 1 << 20


def _greeting(conn: socket.socket, timeout: float) -> str | None:
    """Why the peer is not a Dask scheduler (None: it may be). A scheduler writes
    its handshake as soon as it accepts (``distributed.comm.core``): 8 bytes of
    message length, then the message. Silence within ``timeout`` seconds, a
    closed connection or an implausible length is refused here, in bounded time
    and memory, before Dask's client would wait or allocate for it."""
    conn.settimeout(timeout)
    head = b""
    try:
        while len(head) < 8:
            more = conn.recv(8 - len(head))
            if not more:
                break
            head += more
    except TimeoutError:
        return (
            f"accepts connections but sent no Dask handshake within {timeout:g} s "
            "(no Dask scheduler, or one that wants tls://)"
        )
    except OSError as err:
        return f"connection failed during the handshake ({err.strerror or err})"
    if len(head) < 8:
        return "closed the connection without a Dask handshake (not a scheduler?)"
    (length,) = struct.unpack("<Q", head)
    if not 0 < length <= MAX_GREETING:
        said = head.decode("ascii", errors="replace")
        shown = "".join(c if c.isprintable() else "?" for c in said)
        return f"not a Dask scheduler: it answered {shown!r}..."
    return None
