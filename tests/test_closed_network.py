"""With FETCH_PUBLIC off, no outbound request and no DNS query leaves the allowed networks.

Every road out goes by the same allow-list: source checks, thumbnails, the web archive and
webhook deliveries. A name is looked up in the hosts file only.
"""

import socket

import pytest

from summaries import linkcheck, thumbnails
from summaries.checking.options import fetch_networks, fetch_options
from summaries.linkcheck import policy, transport
from summaries.linkcheck.deliver import post
from summaries.models import Video

from .factories import VideoFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lookups(monkeypatch):
    """Every name the system resolver is asked for."""
    asked = []
    real = socket.getaddrinfo

    def recording(host, *args, **kwargs):
        asked.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", recording)
    return asked


@pytest.fixture
def closed(settings):
    settings.FETCH_PUBLIC = False
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    return settings


def test_the_test_suite_runs_closed(settings):
    assert settings.FETCH_PUBLIC is False
    assert not linkcheck.policy.is_public_allowed(fetch_networks())


def test_a_youtube_thumbnail_is_not_looked_up(closed, lookups, tmp_path):
    closed.STORAGES = {
        **closed.STORAGES,
        "thumbnails": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    video = VideoFactory(source_url="https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    assert thumbnails.wanted_source(video).startswith("https://i.ytimg.com/")

    assert thumbnails.fetch_thumbnail(video=video) == thumbnails.FAILED

    assert lookups == []
    video = Video.objects.get(pk=video.pk)
    assert "public addresses are off" in video.thumbnail_error
    assert video.thumbnail_files == []


def test_a_cited_public_page_is_refused_without_a_lookup(closed, lookups):
    result = linkcheck.fetch("https://example.com/report", need_body=True, **fetch_options())
    assert result.state == linkcheck.State.BLOCKED
    assert lookups == []


def test_a_public_address_is_refused_under_a_closed_list():
    closed_list = policy.allow_list(["127.0.0.2/31"], public=False)
    with pytest.raises(policy.Blocked, match="outside the allowed networks"):
        policy.vet_address("93.184.216.34", allowed_networks=closed_list)
    assert str(policy.vet_address("127.0.0.2", allowed_networks=closed_list)) == "127.0.0.2"
    open_list = policy.allow_list(["127.0.0.2/31"], public=True)
    assert str(policy.vet_address("93.184.216.34", allowed_networks=open_list)) == ("93.184.216.34")


def test_a_webhook_to_a_public_name_is_not_looked_up(closed, lookups):
    result = post(
        "https://hooks.example.com/in",
        b"{}",
        headers={},
        allowed_networks=policy.allow_list([], public=False),
    )
    assert not result.delivered and result.error_class == linkcheck.ErrorClass.BLOCKED
    assert lookups == []


def test_names_are_read_from_the_hosts_file(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("# local names\n127.0.0.2  stub.test stub  # a stub site\n\n::1 localhost\n")
    assert transport.hosts_file_resolver("STUB.test.", str(hosts)) == ["127.0.0.2"]
    assert transport.hosts_file_resolver("localhost", str(hosts)) == ["::1"]
    with pytest.raises(policy.Blocked):
        transport.hosts_file_resolver("example.com", str(hosts))
