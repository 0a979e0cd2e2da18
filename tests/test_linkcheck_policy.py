"""summaries.linkcheck address policy: the SSRF rules.

Names are resolved by stub resolvers only, and a guard fails any test that tries to open
a connection: every refusal here must happen before a single packet is sent.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

from summaries.linkcheck import (
    Blocked,
    check_url,
    fetch,
    parse_networks,
    parse_target,
    vet_address,
    vet_port,
)

STUB_HOSTS = {
    "localhost": ["127.0.0.1"],
    "metadata.test": ["169.254.169.254"],
    "metadata6.test": ["fd00:ec2::254"],
    "private.test": ["10.1.2.3"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "nat64.test": ["64:ff9b::7f00:1"],
    "mixed.test": ["127.0.0.2", "192.168.1.1"],
    "allowed.test": ["127.0.0.2"],
    "public.test": ["8.8.8.8"],
    "zero.test": ["0.0.0.0"],  # noqa: S104 - an address to refuse, not to bind
    "garbage.test": ["not-an-address"],
}


class Resolver:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        return STUB_HOSTS[host]


@pytest.fixture
def no_connections(monkeypatch):
    """Fail the test on any attempt to connect a socket."""
    attempts: list[object] = []

    def refuse(self, address, *args):
        attempts.append(address)
        raise AssertionError(f"connection attempted to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


# --- Addresses --------------------------------------------------------------------------

BLOCKED_ADDRESSES = [
    # IPv4
    "0.0.0.0",  # noqa: S104 - an address to refuse, not to bind
    "0.1.2.3",
    "10.0.0.1",
    "10.255.255.255",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",  # cloud metadata
    "169.254.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.0.2.1",
    "192.88.99.1",
    "192.168.0.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    # IPv6
    "::",
    "::1",
    "::127.0.0.1",  # IPv4-compatible: ipaddress.is_global lets this one through
    "::8.8.8.8",  # deprecated form, refused whatever it embeds
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:10.0.0.1",
    "64:ff9b::7f00:1",  # NAT64: is_global lets this one through too
    "64:ff9b::808:808",
    "64:ff9b:1::1",
    "100::1",
    "2001::1",  # Teredo
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:2::1",
    "2001:db8::1",
    "2001:10::1",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:1::",  # 6to4 of 10.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "3fff::1",
    "5f00::1",
    "fc00::1",
    "fd00:ec2::254",  # AWS metadata over IPv6
    "fe80::1",
    "febf::1",
    "fec0::1",
    "ff02::1",
    "4000::1",  # outside global unicast
]


@pytest.mark.parametrize("address", BLOCKED_ADDRESSES)
def test_internal_and_special_addresses_are_blocked(address):
    with pytest.raises(Blocked):
        vet_address(address)


def test_python_is_global_is_not_enough():
    """Why the ranges are explicit lists."""
    passed_by_python = [
        address
        for address in ("::127.0.0.1", "64:ff9b::7f00:1")
        if ipaddress.ip_address(address).is_global
    ]
    for address in passed_by_python:
        with pytest.raises(Blocked):
            vet_address(address)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("8.8.8.8", "8.8.8.8"),
        ("1.1.1.1", "1.1.1.1"),
        ("100.128.0.1", "100.128.0.1"),  # just past CGNAT
        ("172.32.0.1", "172.32.0.1"),  # just past 172.16/12
        ("2606:4700:4700::1111", "2606:4700:4700::1111"),
        ("::ffff:8.8.8.8", "8.8.8.8"),  # IPv4-mapped: judged (and connected) as IPv4
        ("2002:808:808::1", "2002:808:808::1"),  # 6to4 of a public address
    ],
)
def test_public_addresses_are_allowed(address, expected):
    assert str(vet_address(address)) == expected


def test_scoped_and_invalid_addresses_are_blocked():
    for address in ("fe80::1%eth0", "2606:4700::1%1", "not-an-ip", "999.0.0.1"):
        with pytest.raises(Blocked):
            vet_address(address)


def test_allowed_networks_open_exactly_their_range():
    allowed = ["127.0.0.2/31"]
    assert str(vet_address("127.0.0.2", allowed_networks=allowed)) == "127.0.0.2"
    assert str(vet_address("127.0.0.3", allowed_networks=allowed)) == "127.0.0.3"
    for neighbour in ("127.0.0.1", "127.0.0.4", "::1", "::ffff:127.0.0.1"):
        with pytest.raises(Blocked):
            vet_address(neighbour, allowed_networks=allowed)
    assert str(vet_address("::ffff:127.0.0.2", allowed_networks=allowed)) == "127.0.0.2"
    assert str(vet_address("fd00::5", allowed_networks=["fd00::/64"])) == "fd00::5"


@pytest.mark.parametrize(
    ("address", "ipv6_range"),
    [
        ("2002:7f00:2::", "2002::/16"),  # 6to4 of 127.0.0.2
        ("2002:7f00:3:1::1", "2002::/16"),  # 6to4 of 127.0.0.3
        ("64:ff9b::7f00:2", "64:ff9b::/96"),  # NAT64 of 127.0.0.2
        ("::127.0.0.2", "::/96"),  # IPv4-compatible
        ("::ffff:0:7f00:2", "::ffff:0:0:0/96"),  # IPv4-translated (SIIT)
        ("2001:0:808:808:0:0:80ff:fffd", "2001::/32"),  # Teredo, client 127.0.0.2
        ("64:ff9b:1:7f00:0:200::", "64:ff9b:1::/48"),  # local-use NAT64 (/48 form)
    ],
)
def test_an_embedded_ipv4_address_never_makes_an_ipv6_address_allowed(address, ipv6_range):
    """Allowing 127.0.0.2 allows that IPv4 address, not IPv6 addresses that carry it.

    Whether or not the IPv6 range itself is allowed, an address that embeds an IPv4
    address the public rules refuse stays refused.
    """
    for allowed in (["127.0.0.2/31"], [ipv6_range], ["127.0.0.2/31", ipv6_range], ["::/0"]):
        with pytest.raises(Blocked):
            vet_address(address, allowed_networks=allowed)


def test_an_ipv6_address_is_allowed_on_its_own_merits():
    # A 6to4 address that carries a public IPv4 address is public, with or without a list.
    for allowed in ((), ["127.0.0.2/31"], ["2002::/16"]):
        assert str(vet_address("2002:808:808::1", allowed_networks=allowed)) == "2002:808:808::1"
    # An allowed IPv6 network opens its addresses, unless they carry a refused IPv4 address.
    assert str(vet_address("64:ff9b::808:808", allowed_networks=["64:ff9b::/96"])) == (
        "64:ff9b::808:808"
    )
    with pytest.raises(Blocked, match="6to4"):
        vet_address("2002:a9fe:a9fe::1", allowed_networks=["2002:a9fe::/32"])
    with pytest.raises(Blocked, match="NAT64"):
        vet_address("64:ff9b::a9fe:a9fe", allowed_networks=["64:ff9b::/96"])
    # :: and ::1 are not IPv4-compatible addresses: an allowed ::1 stays allowed.
    assert str(vet_address("::1", allowed_networks=["::1/128"])) == "::1"
    # IPv4-mapped addresses are the IPv4 address itself, judged and connected to as IPv4.
    assert str(vet_address("::ffff:127.0.0.2", allowed_networks=["127.0.0.2/31"])) == ("127.0.0.2")
    with pytest.raises(Blocked):
        vet_address("::ffff:127.0.0.2", allowed_networks=["::ffff:0:0/96"])


def test_ports_other_than_the_schemes_own_need_an_allowed_network():
    allowed = parse_networks("127.0.0.2/31")
    public = ipaddress.ip_address("8.8.8.8")
    vet_port(80, public, scheme="http")
    vet_port(443, public, scheme="https")
    for scheme, port in (("http", 443), ("https", 80), ("http", 8080), ("https", 8443)):
        with pytest.raises(Blocked, match=f"port {port}"):
            vet_port(port, public, scheme=scheme, allowed_networks=allowed)
    for scheme, port in (("http", 443), ("https", 80), ("http", 8080)):
        vet_port(port, ipaddress.ip_address("127.0.0.2"), scheme=scheme, allowed_networks=allowed)


@pytest.mark.parametrize(
    ("url", "allowed_networks", "passes"),
    [
        # The port follows the scheme: http is 80, https is 443, never the other way round.
        ("http://example.com:80/", (), True),
        ("https://example.com:443/", (), True),
        ("http://example.com:443/", (), False),
        ("https://example.com:80/", (), False),
        ("http://8.8.8.8:80/", (), True),
        ("https://8.8.8.8:443/", (), True),
        ("http://8.8.8.8:443/", (), False),
        ("https://8.8.8.8:80/", (), False),
        ("https://[2606:4700:4700::1111]:443/", (), True),
        ("http://[2606:4700:4700::1111]:443/", (), False),
        ("https://[2606:4700:4700::1111]:80/", (), False),
        # An allowed network opens any port on its own addresses, and only on those.
        ("http://127.0.0.2:443/", ("127.0.0.2/31",), True),
        ("https://127.0.0.3:80/", ("127.0.0.2/31",), True),
        ("http://[::ffff:127.0.0.2]:443/", ("127.0.0.2/31",), True),
        ("http://8.8.8.8:443/", ("127.0.0.2/31",), False),
        ("https://8.8.8.8:80/", ("127.0.0.2/31",), False),
        ("http://[2606:4700:4700::1111]:443/", ("127.0.0.2/31",), False),
        ("https://[fd00::5]:80/", ("fd00::/64",), True),
    ],
)
def test_the_port_must_match_the_scheme_unless_the_address_is_allowed(
    url, allowed_networks, passes
):
    if passes:
        check_url(url, allowed_networks=allowed_networks)
    else:
        with pytest.raises(Blocked, match="port"):
            check_url(url, allowed_networks=allowed_networks)


@pytest.mark.parametrize(
    ("url", "reached"),
    [
        ("http://public.test:443/", None),
        ("https://public.test:80/", None),
        ("http://allowed.test:443/", ("127.0.0.2", 443)),
        ("https://allowed.test:80/", ("127.0.0.2", 80)),
    ],
)
def test_a_names_port_is_judged_against_each_address_it_resolves_to(url, reached, no_connections):
    """With an allowed network, a name's port can only be judged once it is resolved."""
    resolver = Resolver()
    if reached is None:
        result = fetch(url, need_body=True, resolver=resolver, allowed_networks="127.0.0.2/31")
        assert (result.state, result.error_class, result.attempts) == ("blocked", "blocked", 0)
        assert "port" in result.error
    else:
        with pytest.raises(AssertionError):  # allowed: gets as far as connecting
            fetch(url, need_body=True, resolver=resolver, allowed_networks="127.0.0.2/31")
    assert no_connections == ([] if reached is None else [reached])


def test_parse_networks_reads_the_setting_form():
    assert parse_networks("") == ()
    assert parse_networks(" 127.0.0.2/31 , fd00::/8,") == (
        ipaddress.ip_network("127.0.0.2/31"),
        ipaddress.ip_network("fd00::/8"),
    )
    with pytest.raises(ValueError, match="host bits set"):
        parse_networks("127.0.0.3/31")  # host bits set


# --- URLs -------------------------------------------------------------------------------

BLOCKED_URLS = [
    # Schemes
    "file:///etc/passwd",
    "ftp://example.com/",
    "gopher://example.com:70/_GET",
    "javascript:alert(1)",
    "data:text/html,hi",
    "dict://example.com:11211/",
    "//example.com/",
    "example.com/path",
    "http:example.com",
    "http:///path",
    # Userinfo and backslash tricks
    "http://user@example.com/",
    "http://user:pass@example.com/",
    "http://example.com@127.0.0.1/",
    "http://example.com\\@127.0.0.1/",
    "http://127.0.0.1\\@example.com/",
    "http://example.com\\.127.0.0.1/",
    # Control characters and whitespace
    "http://example.com/\n",
    "http://exam\tple.com/",
    "http://example.com /",
    " http://example.com/",
    "http://example.com/\x00",
    "http://example.com/\x7f",
    "http://example.com\u200b/",
    "http://example.com/\u2028",
    # Numeric host spellings of 127.0.0.1
    "http://2130706433/",
    "http://017700000001/",
    "http://0x7f000001/",
    "http://0x7f.1/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://0177.1/",
    "http://127.1/",
    "http://127.0.1/",
    "http://127.000.000.001/",
    "http://127.0.0.1./",
    "http://0/",
    "http://0x/",
    "http://1.2.3.4.5/",
    "http://example.123/",
    "http://256.0.0.1/",
    "http://１２７.０.０.１/",  # full-width digits IDNA-map to 127.0.0.1
    "http://１２７．０．０．１/",  # and full-width dots
    # Literal internal addresses
    "http://127.0.0.1/",
    "http://10.0.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://[2001::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://[fec0::1]/",
    # Ports
    "http://example.com:8080/",
    "http://example.com:22/",
    "https://example.com:0/",
    "http://example.com:99999/",
    "http://example.com:-1/",
    "http://example.com:http/",
    # Hosts that are not hostnames
    "http://exa%6dple.com/",
    "http://127.0.0.1%2f@example.com/",
    "http://exam_ple..com/",
    "http://-example.com/",
]


@pytest.mark.parametrize("url", BLOCKED_URLS)
def test_url_spellings_are_blocked_without_dns(url):
    with pytest.raises(Blocked):
        check_url(url)


@pytest.mark.parametrize("url", BLOCKED_URLS)
def test_fetch_blocks_every_spelling_without_any_connection(url, no_connections):
    resolver = Resolver()
    result = fetch(url, need_body=True, resolver=resolver)
    assert (result.state, result.error_class, result.attempts) == ("blocked", "blocked", 0)
    assert result.error
    assert resolver.calls == []
    assert no_connections == []


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "metadata.test",
        "metadata6.test",
        "private.test",
        "mapped.test",
        "nat64.test",
        "mixed.test",
        "zero.test",
        "garbage.test",
    ],
)
def test_names_resolving_to_internal_addresses_are_blocked_before_connecting(host, no_connections):
    resolver = Resolver()
    result = fetch(
        f"http://{host}/", need_body=True, resolver=resolver, allowed_networks=["127.0.0.2/31"]
    )
    assert (result.state, result.error_class) == ("blocked", "blocked")
    assert resolver.calls == [host]  # resolved once, never retried
    assert no_connections == []


def test_a_name_in_an_allowed_network_may_use_any_port_but_others_may_not(no_connections):
    resolver = Resolver()
    blocked = fetch("http://localhost:8080/", need_body=True, resolver=resolver)
    assert blocked.state == "blocked"  # no allowed network: refused before resolving
    assert resolver.calls == []
    with pytest.raises(AssertionError):  # allowed: gets as far as connecting
        fetch(
            "http://allowed.test:8080/",
            need_body=True,
            resolver=resolver,
            allowed_networks="127.0.0.2/31",
        )
    assert no_connections == [("127.0.0.2", 8080)]  # to the vetted address


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "https://example.com/path?q=1#frag",
        "HTTPS://Example.COM:443/",
        "http://xn--bcher-kva.example/",
        "http://bücher.example/",
        "http://a.b-c.example/x%20y",
        "http://8.8.8.8/",
        "http://[2606:4700:4700::1111]/",
        "http://123.example.com/",
        "http://example.com./",
    ],
)
def test_ordinary_urls_pass(url):
    check_url(url)


def test_parse_target_splits_for_connecting():
    target = parse_target("HTTPS://Bücher.Example:443/a%20b/ü?q=ä#frag")
    assert target.scheme == "https" and target.port == 443
    assert target.host == "xn--bcher-kva.example"
    assert target.request_target == "/a%20b/%C3%BC?q=%C3%A4"
    assert target.url == "https://xn--bcher-kva.example/a%20b/%C3%BC?q=%C3%A4"
    assert target.host_header == "xn--bcher-kva.example"
    assert target.address is None
    literal = parse_target("http://[2606:4700::1]:8080")
    assert (literal.host_header, literal.request_target) == ("[2606:4700::1]:8080", "/")
    assert str(literal.address) == "2606:4700::1"
