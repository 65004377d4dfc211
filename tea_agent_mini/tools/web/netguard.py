"""Which addresses ``toolkit_web_fetch`` may connect to: public ones only, unless allowed.

A model that can fetch any URL can read the agent server's own API on 127.0.0.1, a router's admin
page or a cloud metadata service (169.254.169.254). So every host is resolved and each of its
addresses checked before connecting, on every redirect hop; and the connection then goes to the
checked address itself (the URL's host stays in the ``Host`` header and TLS SNI, so certificates
are still verified against the name). A DNS server that answers differently on a second lookup
(rebinding) therefore cannot slip a private address in between check and connect.

The limit: with an HTTP proxy configured (``HTTP_PROXY``...), the proxy makes the connection and
may reach what this check cannot see.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tea_agent_mini.errors import ToolError

if TYPE_CHECKING:
    import httpx

Resolver = Callable[[str, int], list[str]]
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def address_refusal(address: str) -> str | None:
    """Why a fetch may not connect to ``address`` (an IP literal), or None when it may."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone ("fe80::1%eth0")
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is None and ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            refusal = address_refusal(str(inner))
            return f"{address}, which stands for {refusal}" if refusal else None
    if ip.is_loopback:
        kind = "loopback"
    elif ip.is_link_local:
        kind = "link-local"
    elif ip.is_multicast:
        kind = "multicast"
    elif ip.is_unspecified:
        kind = "unspecified"
    elif not ip.is_global:
        kind = "private or reserved"
    else:
        return None
    return f"{address}, a {kind} address"


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (an IP literal resolves to itself)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"cannot resolve {host}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _refusal(address: str, _port: int) -> str | None:
    return address_refusal(address)


@dataclass(frozen=True)
class FetchPolicy:
    """``allow_private`` is ``agent.allow_private_fetch``; ``resolve`` and ``refuse`` are
    seams for tests (a fake name, one local port treated as public)."""

    allow_private: bool = False
    resolve: Resolver = resolve_host
    refuse: Callable[[str, int], str | None] = _refusal

    def send(self, client: httpx.Client, url: str) -> httpx.Response:
        """GET ``url`` (streamed), connecting only to addresses this policy allows: each checked
        address in turn until one connects, as a plain connect would try them.

        Raises ToolError naming the address when the host resolves to a refused one.
        """
        import httpx

        target = httpx.URL(url)
        if self.allow_private:
            return client.send(client.build_request("GET", target), stream=True)
        addresses = self._checked(target, url)
        headers = {"Host": target.netloc.decode("ascii")}
        for address in addresses:
            extensions = {} if address == target.host else {"sni_hostname": target.host}
            pinned = target.copy_with(host=address)
            request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
            try:
                return client.send(request, stream=True)
            except httpx.ConnectError:
                if address == addresses[-1]:
                    raise
        raise AssertionError("unreachable: _checked returns at least one address")

    def _checked(self, target: httpx.URL, url: str) -> list[str]:
        host = target.host
        port = target.port or (443 if target.scheme == "https" else 80)
        addresses = self.resolve(host, port)
        if not addresses:
            raise ToolError(f"cannot resolve {host}: no addresses")
        for address in addresses:
            refusal = self.refuse(address, port)
            if refusal:
                where = refusal if address == host else f"{host} resolves to {refusal}"
                raise ToolError(
                    f"refusing to fetch {url}: {where}; the agent may not reach this machine "
                    "or private networks (set agent.allow_private_fetch: true to allow it)"
                )
        return addresses
