"""summaries.linkcheck.transport: from a name to a connection, as the fetcher and the
webhook sender both make it, against real loopback servers.

127.0.0.2 and 127.0.0.3 are allowed (as in test_linkcheck_fetch.py); a port found free and
left closed stands for an address that refuses connections. 127.0.0.1 plays the internal
address the policy keeps out. Addresses outside 127.0.0.0/8 are only vetted, never contacted.
"""

from __future__ import annotations

import socket
import ssl
import time

import pytest
import trustme

from summaries.linkcheck import ErrorClass, parse_networks, parse_target
from summaries.linkcheck.deliver import post
from summaries.linkcheck.policy import Blocked
from summaries.linkcheck.transport import (
    Guard,
    NetError,
    connect_first,
    resolve,
    vetted_addresses,
)
from tests.test_linkcheck_fetch import (  # noqa: F401 - make_server is a fixture
    left_in_the_kernel,
    make_server,
    page,
)
from tests.webhook_receiver import Receiver

ALLOWED = parse_networks(["127.0.0.2/31"])


def closed_port(host: str) -> int:
    """A port nothing listens on at `host`: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def addresses_of(url: str, names: dict[str, list[str]], allowed=ALLOWED):
    """The vetted addresses of the URL's host, its name resolved from `names`."""
    return vetted_addresses(
        parse_target(url), resolver=names.__getitem__, allowed_networks=allowed, timeout=3.0
    )


def connect(url: str, addresses, **options):
    """connect_first to the URL's target within a deadline of 3 s (or `guard`'s)."""
    guard = options.pop("guard", None) or Guard(3.0)
    try:
        return connect_first(parse_target(url), addresses, guard=guard, timeout=3.0, **options)
    finally:
        guard.disarm()


def get_status(connection, host_header: str) -> int:
    try:
        connection.request("GET", "/", headers={"Host": host_header, "Connection": "close"})
        return connection.getresponse().status
    finally:
        connection.close()


# --- Connecting: the first address that takes a connection ---------------------------------


def test_an_address_that_refuses_is_followed_by_the_next(make_server):  # noqa: F811
    server = make_server("127.0.0.2", "a.test")
    server.routes["/"] = page(200)
    url = f"http://a.test:{server.port}/"
    # Nothing listens on 127.0.0.3 at the server's port: the first address refuses.
    addresses = addresses_of(url, {"a.test": ["127.0.0.3", "127.0.0.2"]})
    connection = connect(url, addresses)
    assert connection.host == "127.0.0.2"
    assert get_status(connection, f"a.test:{server.port}") == 200
    assert server.connections == 1


def test_when_every_address_refuses_the_last_refusal_is_raised():
    port = closed_port("127.0.0.2")
    url = f"http://a.test:{port}/"
    addresses = addresses_of(url, {"a.test": ["127.0.0.2", "127.0.0.3"]})
    with pytest.raises(NetError) as refused:
        connect(url, addresses)
    assert refused.value.error_class == ErrorClass.REFUSED
    with pytest.raises(NetError) as nothing:
        connect(url, [])
    assert nothing.value.error_class == ErrorClass.REFUSED


def test_no_further_address_is_tried_once_the_deadline_has_passed(make_server):  # noqa: F811
    server = make_server("127.0.0.2", "a.test")
    url = f"http://a.test:{server.port}/"
    guard = Guard(0.0)
    give_up = time.monotonic() + 2
    while not guard.fired and time.monotonic() < give_up:
        time.sleep(0.005)
    with pytest.raises(NetError):
        connect(url, addresses_of(url, {"a.test": ["127.0.0.3", "127.0.0.2"]}), guard=guard)
    assert server.connections == 0


def test_a_certificate_that_fails_is_not_tried_at_another_address(make_server):  # noqa: F811
    authority = trustme.CA()
    secure = make_server("127.0.0.2", "secure.test")
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("secure.test").configure_cert(server_context)
    secure.socket = server_context.wrap_socket(secure.socket, server_side=True)
    client_context = ssl.create_default_context()
    authority.configure_trust(client_context)
    url = f"https://wrong.test:{secure.port}/"
    addresses = addresses_of(url, {"wrong.test": ["127.0.0.2", "127.0.0.3"]})
    with listening("127.0.0.3", secure.port) as next_address:
        with pytest.raises(NetError) as failed:
            connect(url, addresses, ssl_context=client_context)
        assert failed.value.error_class == ErrorClass.TLS
        assert not contacted(next_address)


def listening(host: str, port: int) -> socket.socket:
    """A socket listening at host:port that accepts nothing: the kernel queues connections."""
    sock = socket.socket()
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        pytest.skip(f"{host}:{port} is taken")
    sock.listen()
    sock.setblocking(False)
    return sock


def contacted(sock: socket.socket) -> bool:
    try:
        connection, _ = sock.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


# --- The policy: which addresses may be tried ------------------------------------------------


def test_a_private_address_is_refused_unless_its_network_is_allowed():
    names = {"internal.test": ["127.0.0.1"]}
    with pytest.raises(Blocked, match="loopback"):
        addresses_of("http://internal.test/", names)
    allowed = parse_networks(["127.0.0.1/32"])
    assert [str(a) for a in addresses_of("http://internal.test/", names, allowed)] == ["127.0.0.1"]


def test_a_name_with_one_private_address_among_allowed_ones_is_refused_whole():
    with pytest.raises(Blocked, match="127.0.0.1"):
        addresses_of("http://a.test/", {"a.test": ["127.0.0.2", "127.0.0.1"]})


def test_outside_the_allowed_networks_only_the_schemes_own_port_is_allowed():
    names = {"public.test": ["93.184.216.34"]}
    assert [str(a) for a in addresses_of("http://public.test/", names)] == ["93.184.216.34"]
    with pytest.raises(Blocked, match="port 8080"):
        addresses_of("http://public.test:8080/", names)
    with pytest.raises(Blocked, match="port 8080"):  # refused before asking DNS
        addresses_of("http://public.test:8080/", {}, allowed=())


def test_a_name_is_resolved_once_when_its_addresses_are_kept():
    asked = []

    def resolver(host):
        asked.append(host)
        return ["127.0.0.2"]

    known: dict = {}
    for _ in range(2):
        vetted_addresses(
            parse_target("http://a.test:8080/"),
            resolver=resolver,
            allowed_networks=ALLOWED,
            timeout=3.0,
            known=known,
        )
    assert asked == ["a.test"] and list(known) == ["a.test"]


def test_resolution_failures():
    with pytest.raises(NetError) as unknown:
        resolve("nowhere.test", {}.__getitem__, timeout=3.0)
    assert unknown.value.error_class == ErrorClass.DNS
    with pytest.raises(NetError) as late:
        resolve("a.test", {"a.test": ["127.0.0.2"]}.__getitem__, timeout=0.0)
    assert late.value.error_class == ErrorClass.TIMEOUT
    with pytest.raises(Blocked, match="invalid address"):
        resolve("a.test", {"a.test": ["not-an-ip"]}.__getitem__, timeout=3.0)


# --- The webhook sender connects the same way ----------------------------------------------


def test_a_webhook_goes_to_the_address_that_takes_it():
    receiver = Receiver("127.0.0.2").start()
    try:
        port = receiver.server_address[1]
        result = post(
            f"http://hooks.test:{port}/hooks",
            b"{}",
            headers={},
            resolver={"hooks.test": ["127.0.0.3", "127.0.0.2"]}.__getitem__,
            allowed_networks=["127.0.0.2/31"],
            deadline=3.0,
        )
        assert (result.status, result.address) == (204, "127.0.0.2")
        assert len(receiver.received) == 1
    finally:
        receiver.stop()


def test_a_webhook_given_up_on_is_reset_not_left_for_the_kernel_to_deliver():
    # A delivery that timed out is tried again later: the first POST must not reach the
    # receiver after all, sent again by the kernel once a dead link comes back.
    def post_to(port: int) -> str:
        result = post(
            f"http://hooks.test:{port}/hooks",
            b"{}",
            headers={},
            resolver={"hooks.test": ["127.0.0.2"]}.__getitem__,
            allowed_networks=["127.0.0.2/31"],
            deadline=0.3,
        )
        return result.error_class

    request, left = left_in_the_kernel(post_to)
    assert request.startswith(b"POST /hooks HTTP/1.1")
    assert left == []
