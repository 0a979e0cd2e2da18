"""Which URLs and addresses the link checker may contact (SSRF).

Everything here is decided before a connection is made: `parse_target` and `check_url`
look at the URL alone (scheme, host spelling, userinfo, port), `vet_address` and `vet_port`
at each address a name resolves to. The blocked ranges are explicit lists rather than
`ipaddress.is_global`, which passes `::127.0.0.1` and `64:ff9b::7f00:1`.

Allowed networks (FETCH_ALLOWED_NETWORKS) open exactly their own addresses, on any port.
Otherwise the port is the scheme's own (http 80, https 443), and an IPv6 address that
carries an IPv4 address (6to4, NAT64, Teredo, ...) is refused when that IPv4 address is:
what an address embeds can make it more blocked, never allowed. A closed allow-list
(`AllowList` with `public` false: FETCH_PUBLIC off) opens its networks and nothing else:
public addresses are refused too, and names are looked up in the hosts file only
(transport.vetted_addresses), so no query leaves for a DNS server.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, quote, urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOWED_SCHEMES = frozenset({"http", "https"})
# Outside the allowed networks, each scheme is contacted on its own port only.
DEFAULT_PORTS = {"http": 80, "https": 443}


class Blocked(Exception):
    """The URL or address may not be contacted; `reason` says why. Never retried."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _networks(*specs: tuple[str, str]) -> tuple[tuple[IPNetwork, str], ...]:
    return tuple((ipaddress.ip_network(cidr), reason) for cidr, reason in specs)


# IANA IPv4 special-purpose registry, minus the few globally reachable entries.
BLOCKED_IPV4 = _networks(
    ("0.0.0.0/8", "'this network' (0.0.0.0/8)"),
    ("10.0.0.0/8", "private (10.0.0.0/8)"),
    ("100.64.0.0/10", "shared address space / CGNAT (100.64.0.0/10)"),
    ("127.0.0.0/8", "loopback (127.0.0.0/8)"),
    ("169.254.0.0/16", "link-local / cloud metadata (169.254.0.0/16)"),
    ("172.16.0.0/12", "private (172.16.0.0/12)"),
    ("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
    ("192.0.2.0/24", "documentation (192.0.2.0/24)"),
    ("192.88.99.0/24", "6to4 relay anycast (192.88.99.0/24)"),
    ("192.168.0.0/16", "private (192.168.0.0/16)"),
    ("198.18.0.0/15", "benchmarking (198.18.0.0/15)"),
    ("198.51.100.0/24", "documentation (198.51.100.0/24)"),
    ("203.0.113.0/24", "documentation (203.0.113.0/24)"),
    ("224.0.0.0/4", "multicast (224.0.0.0/4)"),
    ("255.255.255.255/32", "broadcast (255.255.255.255)"),
    ("240.0.0.0/4", "reserved (240.0.0.0/4)"),
)

# IPv4-mapped addresses (::ffff:0:0/96) are converted to the IPv4 address they are (see
# _parse_address); Teredo addresses (2001::/32) carry a server in bits 32-63 and a client
# (inverted) at the end, read by `IPv6Address.teredo`.
# IPv6 forms that carry an IPv4 address (see _embedded_ipv4): refused when it is refused.
SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: in the last 32 bits
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: where depends on the prefix
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # in the last 32 bits, except :: and ::1
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # RFC 2765 (SIIT): the last 32 bits
BLOCKED_IPV6 = _networks(
    ("::/128", "unspecified (::)"),
    ("::1/128", "loopback (::1)"),
    # Deprecated (RFC 4291 2.5.5.1): never a real destination, whatever it embeds.
    ("::/96", "IPv4-compatible (::/96)"),
    ("64:ff9b::/96", "NAT64 (64:ff9b::/96)"),
    ("64:ff9b:1::/48", "local-use NAT64 (64:ff9b:1::/48)"),
    ("100::/64", "discard-only (100::/64)"),
    ("2001::/32", "Teredo (2001::/32)"),
    ("2001:2::/48", "benchmarking (2001:2::/48)"),
    ("2001:db8::/32", "documentation (2001:db8::/32)"),
    ("2001::/23", "IETF protocol assignments (2001::/23)"),
    ("3fff::/20", "documentation (3fff::/20)"),
    ("5f00::/16", "SRv6 SIDs (5f00::/16)"),
    ("fc00::/7", "unique local (fc00::/7)"),
    ("fe80::/10", "link-local (fe80::/10)"),
    ("fec0::/10", "site-local (fec0::/10)"),
    ("ff00::/8", "multicast (ff00::/8)"),
)
# Anything outside global unicast is reserved, named in the list above or not.
GLOBAL_UNICAST_IPV6 = ipaddress.ip_network("2000::/3")


class AllowList(tuple):  # type: ignore[type-arg]  # of IPNetwork
    """Allowed networks, and whether public addresses may be contacted besides them."""

    public: bool = True

    def __new__(cls, networks: Iterable[IPNetwork], *, public: bool = True) -> AllowList:
        allow = super().__new__(cls, networks)
        allow.public = public
        return allow


def allow_list(networks: str | Iterable[str | IPNetwork], *, public: bool) -> AllowList:
    """The networks (parse_networks) as an allow-list, closed when not `public`."""
    return AllowList(parse_networks(networks), public=public)


def is_public_allowed(networks: Iterable[str | IPNetwork]) -> bool:
    return getattr(networks, "public", True)


def parse_networks(networks: str | Iterable[str | IPNetwork]) -> tuple[IPNetwork, ...]:
    """CIDRs from a comma-separated string (the FETCH_ALLOWED_NETWORKS form) or a list.

    Host bits must be zero ("127.0.0.2/31", not "127.0.0.3/31"); a bare address is a /32
    or /128. Raises ValueError for anything that is not a network. An AllowList is
    returned as it is (it is parsed already, and keeps whether it is closed).
    """
    if isinstance(networks, AllowList):
        return networks
    if isinstance(networks, str):
        networks = [part for part in networks.split(",") if part.strip()]
    parsed = []
    for network in networks:
        if isinstance(network, str):
            network = ipaddress.ip_network(network.strip())
        parsed.append(network)
    return tuple(parsed)


def _in_any(address: IPAddress, networks: Iterable[IPNetwork]) -> bool:
    return any(address.version == net.version and address in net for net in networks)


def _parse_address(ip: str | IPAddress) -> IPAddress:
    if isinstance(ip, str):
        try:
            ip = ipaddress.ip_address(ip)
        except ValueError:
            raise Blocked(f"not an IP address: {ip!r}") from None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            raise Blocked(f"scoped IPv6 address {ip}")
        mapped = ip.ipv4_mapped  # ::ffff:a.b.c.d is a.b.c.d to the kernel
        if mapped is not None:
            return mapped
    return ip


def vet_address(
    ip: str | IPAddress, *, allowed_networks: Iterable[str | IPNetwork] = ()
) -> IPAddress:
    """Return the address to connect to, or raise Blocked if it may not be contacted.

    An IPv4 address is allowed when it is inside one of `allowed_networks`, or public:
    loopback, private, CGNAT, link-local (cloud metadata), multicast, broadcast, reserved,
    documentation and benchmarking ranges are refused. An IPv4-mapped address
    (::ffff:a.b.c.d) is that IPv4 address to the kernel: it is judged, and returned, as
    a.b.c.d. With a closed allow-list, only addresses inside it are allowed.

    An IPv6 address is allowed only on its own merits: inside an allowed IPv6 network, or
    global unicast outside the special ranges (unspecified, loopback, NAT64, Teredo,
    IPv4-compatible, unique local, link-local, multicast, documentation, ...). On top of
    that, an IPv6 address that carries an IPv4 address (6to4 2002:AABB:CCDD::, NAT64,
    Teredo, IPv4-compatible, IPv4-translated) is refused when that IPv4 address is refused
    by the public rules, even when it is inside an allowed network: an embedded address can
    make an address more blocked, never allowed. Local-use NAT64 (64:ff9b:1::/48), where
    the position of the IPv4 address cannot be told, is always refused.
    """
    address = _parse_address(ip)
    allowed = parse_networks(allowed_networks)
    if not is_public_allowed(allowed) and not _in_any(address, allowed):
        raise Blocked(f"{address} is outside the allowed networks (public addresses are off)")
    if isinstance(address, ipaddress.IPv4Address):
        if not _in_any(address, allowed):
            _vet_ipv4(address)
        return address
    if not _in_any(address, allowed):
        for network, reason in BLOCKED_IPV6:
            if address in network:
                raise Blocked(f"{address} is {reason}")
        if address not in GLOBAL_UNICAST_IPV6:
            raise Blocked(f"{address} is reserved (outside 2000::/3)")
    if address in LOCAL_NAT64:
        raise Blocked(f"{address} is local-use NAT64 (64:ff9b:1::/48): its IPv4 part is unknown")
    for form, embedded in _embedded_ipv4(address):
        try:
            _vet_ipv4(embedded)
        except Blocked as blocked:
            raise Blocked(f"{form} address {address} embeds {blocked.reason}") from None
    return address


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, each with the name of its form."""
    if address in SIX_TO_FOUR:
        return [("6to4", ipaddress.IPv4Address(int(address) >> 80 & 0xFFFFFFFF))]
    teredo = address.teredo  # set inside 2001::/32
    if teredo is not None:
        server, client = teredo
        return [("Teredo", server), ("Teredo", client)]
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in NAT64:
        return [("NAT64", low32)]
    if address in IPV4_TRANSLATED:
        return [("IPv4-translated", low32)]
    if address in IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 carry nothing
        return [("IPv4-compatible", low32)]
    return []


def _vet_ipv4(address: ipaddress.IPv4Address) -> None:
    for network, reason in BLOCKED_IPV4:
        if address in network:
            raise Blocked(f"{address} is {reason}")


def vet_port(
    port: int,
    address: IPAddress,
    *,
    scheme: str,
    allowed_networks: Iterable[str | IPNetwork] = (),
) -> None:
    """Raise Blocked unless `port` is the scheme's own or `address` is in an allowed network.

    http is contacted on port 80 and https on 443 only (not http on 443, nor https on 80);
    an address inside `allowed_networks` may be contacted on any port with either scheme.
    `address` is the vetted one (`vet_address`), so an IPv4-mapped address counts as IPv4.
    """
    if scheme not in ALLOWED_SCHEMES:
        raise Blocked(f"scheme {scheme!r} is not allowed")
    if port == DEFAULT_PORTS[scheme] or _in_any(address, parse_networks(allowed_networks)):
        return
    raise Blocked(_wrong_port(scheme, port))


def _wrong_port(scheme: str, port: int) -> str:
    return f"port {port} is not allowed for {scheme} (only {DEFAULT_PORTS[scheme]})"


# --- URLs -------------------------------------------------------------------------------

# ASCII control characters, space, DEL and Unicode whitespace: browsers and servers strip
# or split on them differently, which is how filters are bypassed.
_UNSAFE_CHARACTER_RE = re.compile(r"[\x00-\x20\x7f\s\u200b-\u200f\u2028\u2029\ufeff]")
_HOST_RE = re.compile(r"[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?)*")
# A final label that is a number (decimal, or 0x hex) makes the WHATWG URL parser (and
# inet_aton) read the whole host as an IPv4 address: "2130706433", "0x7f.1", "127.1".
_NUMERIC_LABEL_RE = re.compile(r"[0-9]+|0x[0-9a-f]*")
_CANONICAL_OCTET_RE = re.compile(r"0|[1-9][0-9]{0,2}")
_PATH_SAFE = "/%:@!$&'()*+,;=~[]"
_QUERY_SAFE = "/?%:@!$&'()*+,;=~[]"


@dataclass(frozen=True)
class Target:
    """A URL that passed the checks that need no DNS, split for connecting."""

    url: str  # scheme://host[:port]/path?query, without the fragment
    scheme: str
    host: str  # lowercase ASCII (IDNA) name, or an IP address without brackets
    port: int
    request_target: str  # path and query, percent-encoded, as sent in the request line
    address: IPAddress | None  # set when the host is an IP address literal

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


def _parse_host(parts: SplitResult) -> tuple[str, IPAddress | None]:
    netloc_host = parts.netloc.rpartition("@")[2]
    if netloc_host.startswith("["):  # an IPv6 literal (urlsplit validated the brackets)
        literal = netloc_host[1 : netloc_host.index("]")]
        if "%" in literal:
            raise Blocked("scoped IPv6 literal")
        try:
            return literal.lower(), ipaddress.IPv6Address(literal)
        except ValueError:
            raise Blocked(f"invalid IPv6 literal {literal!r}") from None
    host = (parts.hostname or "").lower()
    if not host:
        raise Blocked("URL has no host")
    try:
        # IDNA maps full-width digits and dots to ASCII ("１２７．０．０．１" is 127.0.0.1).
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise Blocked(f"invalid host {host!r}") from None
    labels = host.split(".")
    if _NUMERIC_LABEL_RE.fullmatch(labels[-1]) or (
        labels[-1] == "" and len(labels) > 1 and _NUMERIC_LABEL_RE.fullmatch(labels[-2])
    ):
        if len(labels) == 4 and all(_CANONICAL_OCTET_RE.fullmatch(label) for label in labels):
            try:
                return host, ipaddress.IPv4Address(host)
            except ValueError:
                pass  # an octet over 255
        raise Blocked(f"non-canonical numeric host {host!r}")
    host = host.removesuffix(".")
    if not _HOST_RE.fullmatch(host):
        raise Blocked(f"invalid host {host!r}")
    return host, None


def parse_target(url: str) -> Target:
    """Split an http(s) URL for connecting, or raise Blocked.

    Refuses other schemes, userinfo ("user@"), backslashes, control characters and
    whitespace anywhere, hosts spelled as numbers other than a canonical dotted quad
    (decimal "2130706433", hex "0x7f.1", octal "0177.0.0.1", short "127.1"), scoped IPv6
    literals and invalid ports. Ports and addresses are vetted separately (`check_url`).
    """
    if not isinstance(url, str) or not url:
        raise Blocked("empty URL")
    if _UNSAFE_CHARACTER_RE.search(url):
        raise Blocked("control character or whitespace in URL")
    if "\\" in url:
        raise Blocked("backslash in URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise Blocked(f"unparseable URL: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise Blocked(f"scheme {scheme or '(none)'!r} is not allowed")
    if "@" in parts.netloc:
        raise Blocked("userinfo in URL")
    host, address = _parse_host(parts)
    if port is None:
        port = DEFAULT_PORTS[scheme]
    elif not 0 < port < 65536:
        raise Blocked(f"invalid port {port}")
    path = quote(parts.path or "/", safe=_PATH_SAFE)
    if not path.startswith("/"):
        path = "/" + path
    request_target = path + (f"?{quote(parts.query, safe=_QUERY_SAFE)}" if parts.query else "")
    netloc = f"[{host}]" if ":" in host else host
    if port != DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    return Target(
        url=f"{scheme}://{netloc}{request_target}",
        scheme=scheme,
        host=host,
        port=port,
        request_target=request_target,
        address=address,
    )


def check_target(target: Target, *, allowed_networks: Iterable[str | IPNetwork] = ()) -> None:
    """Raise Blocked for what can be refused before DNS: literal addresses and ports.

    An IP-literal host is vetted with `vet_address` and its port with `vet_port`. For a
    name, a port other than the scheme's own (http 80, https 443) is refused when no
    network is allowed at all (no address could pass); otherwise the port is judged
    against each address the name resolves to (`vet_port`, at fetch time).
    """
    allowed = parse_networks(allowed_networks)
    if target.address is not None:
        address = vet_address(target.address, allowed_networks=allowed)
        vet_port(target.port, address, scheme=target.scheme, allowed_networks=allowed)
    elif target.port != DEFAULT_PORTS[target.scheme] and not allowed:
        raise Blocked(_wrong_port(target.scheme, target.port))


def check_url(url: str, *, allowed_networks: Iterable[str | IPNetwork] = ()) -> None:
    """Raise Blocked if the URL may not be fetched, judging by the URL alone (no DNS).

    `parse_target` then `check_target`; names are vetted after resolution, at fetch time.
    """
    check_target(parse_target(url), allowed_networks=allowed_networks)
