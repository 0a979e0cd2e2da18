"""The zero-configuration broker (kombu's file-system transport) publishes each message
file whole (curation/celery.py): a worker listing the queue folder never reads a message
that is still being written."""

import json
import os

import pytest
from kombu import Connection

import curation.celery  # noqa: F401 - applies the broker's patches


def connection(folder):
    return Connection(
        "filesystem://",
        transport_options={
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
            "control_folder": str(folder / "control"),
        },
    )


def visible_messages(folder, queue: str) -> list[str]:
    """The files kombu's consumer would read for `queue` (its own test of a name)."""
    return [name for name in os.listdir(folder) if name.partition(".")[2] == f"{queue}.msg"]


def test_a_message_file_appears_only_once_it_is_whole(tmp_path, monkeypatch):
    seen_before_rename = []
    rename = os.replace

    def replace(source, target):
        seen_before_rename.append(visible_messages(tmp_path, "jobs"))
        with open(source, "rb") as partial:
            assert json.loads(partial.read())  # complete before it is renamed
        rename(source, target)

    monkeypatch.setattr(os, "replace", replace)
    with connection(tmp_path) as broker:
        queue = broker.SimpleQueue("jobs")
        queue.put({"task": "one"})
        queue.put({"task": "two"})
        # Before each rename only the messages already whole were there to read.
        assert [len(names) for names in seen_before_rename] == [0, 1]
        got = [queue.get(timeout=1).payload["task"] for _ in range(2)]
        assert sorted(got) == ["one", "two"]
        queue.close()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    def refuse(source, target):
        raise OSError("disk full")

    # A queue of its own: kombu keeps what was declared in the process, and an exchange
    # declared by another test with another control folder would route nowhere here.
    monkeypatch.setattr(os, "replace", refuse)
    with connection(tmp_path) as broker:
        queue = broker.SimpleQueue("refused")
        # kombu wraps the channel's error
        with pytest.raises(Exception, match="Cannot add file"):  # noqa: B017
            queue.put({"task": "lost"})
        queue.close()
    assert [n for n in os.listdir(tmp_path) if "refused" in n] == []  # nothing half-written
