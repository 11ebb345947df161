"""storage_options without a server: refused by name when wrong, and the retry budget they carry
bounds how long an unreachable store is retried (tests/interop/test_s3_storage_options.py reaches a
real S3 server with them)."""
from __future__ import annotations

import socket
import time

import numpy as np
import pytest

import tessera


def refused_url(scheme: str) -> str:
    """A location on 127.0.0.1 whose port nothing listens on: every connection is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}" if scheme == "endpoint" else f"http://127.0.0.1:{port}/a.zarr"


@pytest.mark.parametrize("call", ["open", "create", "create_array", "create_group", "convert"])
def test_every_entry_point_refuses_an_unknown_key_by_name(call, tmp_path):
    bad = {"endpoint": "http://x", "region": "r"}
    url = "s3://bucket/a.zarr"
    with pytest.raises(tessera.InvalidArgumentError, match='storage_options: unknown key "endpoint"'):
        if call == "open":
            tessera.open(url, storage_options=bad)
        elif call == "create":
            tessera.create(url, dtype="uint8", shape=(4,), chunks=(2,), storage_options=bad)
        elif call == "create_array":
            tessera.create_array(url, dtype="uint8", shape=(4,), chunks=(2,), storage_options=bad)
        elif call == "create_group":
            tessera.create_group(url, storage_options=bad)
        else:
            tessera.convert(np.zeros((4,), "uint8"), url, storage_options=bad)


@pytest.mark.parametrize("options, needle", [
    ({"retry_timeout": "60"}, '"retry_timeout" must be a number of seconds'),
    ({"retry_timeout": 0}, '"retry_timeout" must be a positive number'),
    ({"anonymous": "yes"}, '"anonymous" must be true or false'),
    ({"addressing_style": "host"}, "expected auto, path or virtual"),
    ({"access_key_id": "k"}, '"access_key_id" and "secret_access_key" go together'),
    ({"endpoint_url": 8333}, '"endpoint_url" must be a string'),
])
def test_bad_values_are_refused_naming_the_key(options, needle):
    with pytest.raises(tessera.InvalidArgumentError, match=needle):
        tessera.open("s3://bucket/a.zarr", storage_options=options)


def test_storage_options_must_be_a_dict():
    with pytest.raises(TypeError, match="storage_options: expected a dict"):
        tessera.open("s3://bucket/a.zarr", storage_options="endpoint_url=http://x")


def test_the_retry_timeout_bounds_how_long_an_unreachable_store_is_retried():
    start = time.monotonic()
    with pytest.raises(tessera.IoError, match=r"gave up after \d+ tries in .*retry budget is 0\.5 s"):
        tessera.open(refused_url("http"), storage_options={"retry_timeout": 0.5})
    assert 0.45 <= time.monotonic() - start < 3

    endpoint = refused_url("endpoint")
    start = time.monotonic()
    with pytest.raises(tessera.IoError) as failure:
        tessera.open("s3://bucket/a.zarr", storage_options={"endpoint_url": endpoint, "retry_timeout": 0.5,
                                                            "anonymous": True})
    assert endpoint in str(failure.value), str(failure.value)
    assert 0.45 <= time.monotonic() - start < 3


def test_the_environment_gives_the_budget_when_the_options_do_not(monkeypatch):
    monkeypatch.setenv("TESSERA_RETRY_TIMEOUT_S", "0.5")
    with pytest.raises(tessera.IoError, match=r"retry budget is 0\.5 s"):
        tessera.open(refused_url("http"))
    monkeypatch.setenv("TESSERA_RETRY_TIMEOUT_S", "soon")
    with pytest.raises(tessera.InvalidArgumentError, match='TESSERA_RETRY_TIMEOUT_S is "soon"'):
        tessera.open(refused_url("http"))
