"""storage_options: the store settings a caller passes instead of the environment.

A Dask worker, a job on another host or a notebook with several stores cannot rely on AWS_* variables
being set (or being the right ones), so tessera.open / create / create_array / create_group /
convert take a dict of settings (endpoint_url, region, profile, addressing_style, anonymous,
retry_timeout, and access keys when the caller passes them). Here every test runs with NO AWS_*
variable and AWS files that name nothing: only storage_options can reach the SeaweedFS server
(tests/s3_support.py). Results are checked by tensorstore, which gets its own explicit settings.
"""
from __future__ import annotations

import socket
import time

import numpy as np
import pytest
import tensorstore as ts

from interop_support import assert_identical, random_data
from s3_support import prefix_for, tensorstore_s3_kvstore

BUCKET = "storage-options"


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


def options_for(server) -> dict:
    return {"endpoint_url": server.endpoint, "region": server.region, "access_key_id": server.access_key,
            "secret_access_key": server.secret_key}


def ts_read(server, path: str) -> np.ndarray:
    spec = {"driver": "zarr3", "kvstore": tensorstore_s3_kvstore(server, BUCKET, path.rstrip("/") + "/")}
    return ts.open(spec, read=True).result().read().result()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_create_open_create_array_and_convert_reach_the_server_by_storage_options_alone(server, no_aws_env,
                                                                                      request, rng, tmp_path):
    import tessera as tsr

    opts = options_for(server)
    prefix = prefix_for(request)
    data = random_data(rng, "uint16", (12, 20, 16))

    with tsr.create(f"s3://{BUCKET}/{prefix}/s.zarr", dtype="uint16", shape=data.shape, chunks=(4, 8, 8),
                    shard_chunks=(1, 2, 2), codec="zstd", storage_options=opts) as w:
        w.append(data)
    assert_identical(ts_read(server, f"{prefix}/s.zarr"), data, "tensorstore reads what create wrote")
    a = tsr.open(f"s3://{BUCKET}/{prefix}/s.zarr", storage_options=opts)
    assert_identical(a[...], data, "tessera.open with storage_options")

    r = tsr.create_array(f"s3://{BUCKET}/{prefix}/r.zarr", dtype="uint16", shape=data.shape, chunks=(4, 8, 8),
                         storage_options=opts)
    r[2:10, 4:, ::2] = data[2:10, 4:, ::2]
    expected = np.zeros_like(data)
    expected[2:10, 4:, ::2] = data[2:10, 4:, ::2]
    assert_identical(ts_read(server, f"{prefix}/r.zarr"), expected, "a region written into create_array's array")
    rw = tsr.open(f"s3://{BUCKET}/{prefix}/r.zarr", mode="r+", storage_options=opts)
    rw[0] = data[0]
    expected[0] = data[0]
    assert_identical(ts_read(server, f"{prefix}/r.zarr"), expected, "a region written after open r+")

    # convert: a local source into S3, then S3 into S3 with a pyramid (levels opened by the same settings).
    tsr.convert(tsr.open(f"s3://{BUCKET}/{prefix}/s.zarr", storage_options=opts), tmp_path / "local.zarr")
    tsr.convert(tmp_path / "local.zarr", f"s3://{BUCKET}/{prefix}/c.zarr", storage_options=opts)
    assert_identical(ts_read(server, f"{prefix}/c.zarr"), data, "convert from a local path")
    tsr.convert(f"s3://{BUCKET}/{prefix}/c.zarr", f"s3://{BUCKET}/{prefix}/p.zarr", storage_options=opts,
                source_storage_options=opts, pyramid=2, ome=True)
    image = tsr.open(f"s3://{BUCKET}/{prefix}/p.zarr", storage_options=opts)
    assert len(image.levels) == 2
    assert_identical(image.levels[0][...], data, "level 0 of the converted pyramid")
    assert image.levels[1].shape == tuple((n + 1) // 2 for n in data.shape)

    with tsr.create_group(f"s3://{BUCKET}/{prefix}/g", storage_options=opts) as group:
        group.create("cam", dtype="uint16", shape=data.shape, chunks=(4, 8, 8)).append(data)
    assert_identical(ts_read(server, f"{prefix}/g/cam"), data, "an acquisition's array")

    # Without them nothing reaches the server: the default endpoint is AWS, which is not there.
    with pytest.raises(tsr.Error):
        tsr.open(f"s3://{BUCKET}/{prefix}/s.zarr", storage_options={"retry_timeout": 1})


def test_a_profile_named_by_storage_options_is_read_from_the_aws_files(server, no_aws_env, monkeypatch, request,
                                                                      rng):
    import tessera as tsr

    aws = no_aws_env / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text(
        f"[lab]\naws_access_key_id = {server.access_key}\naws_secret_access_key = {server.secret_key}\n")
    (aws / "config").write_text(f"[profile lab]\nregion = {server.region}\nendpoint_url = {server.endpoint}\n")
    data = random_data(rng, "uint8", (8, 8))
    url = f"s3://{BUCKET}/{prefix_for(request)}/a.zarr"
    with tsr.create(url, dtype="uint8", shape=data.shape, chunks=(4, 4), storage_options={"profile": "lab"}) as w:
        w.append(data)
    assert_identical(tsr.open(url, storage_options={"profile": "lab"})[...], data, "through profile lab")
    with pytest.raises(tsr.InvalidArgumentError, match='profile "nosuch"'):
        tsr.open(url, storage_options={"profile": "nosuch"})


def test_a_wrong_endpoint_fails_within_the_retry_timeout_naming_it(server, no_aws_env, request):
    import tessera as tsr

    wrong = f"http://127.0.0.1:{free_port()}"  # nothing listens there: every connection is refused
    opts = dict(options_for(server), endpoint_url=wrong, retry_timeout=1)
    start = time.monotonic()
    with pytest.raises(tsr.IoError) as failure:
        tsr.open(f"s3://{BUCKET}/{prefix_for(request)}/a.zarr", storage_options=opts)
    seconds = time.monotonic() - start
    message = str(failure.value)
    assert wrong in message and "gave up after" in message and "retry budget is 1.0 s" in message, message
    assert 0.9 <= seconds < 5, seconds


def test_unknown_or_malformed_storage_options_are_refused_by_name(server, no_aws_env, request):
    import tessera as tsr

    url = f"s3://{BUCKET}/{prefix_for(request)}/a.zarr"
    with pytest.raises(tsr.InvalidArgumentError, match='unknown key "endpoint"'):
        tsr.open(url, storage_options={"endpoint": server.endpoint})
    with pytest.raises(tsr.InvalidArgumentError, match='unknown key "regoin"'):
        tsr.create(url, dtype="uint8", shape=(4,), chunks=(2,), storage_options={"regoin": "x"})
    with pytest.raises(tsr.InvalidArgumentError, match='"retry_timeout"'):
        tsr.create_array(url, dtype="uint8", shape=(4,), chunks=(2,), storage_options={"retry_timeout": -1})
    with pytest.raises(TypeError, match="storage_options: expected a dict"):
        tsr.open(url, storage_options=[("region", "x")])
    with pytest.raises(tsr.InvalidArgumentError, match='"addressing_style"'):
        tsr.convert(np.zeros((2, 2), "uint8"), url, storage_options={"addressing_style": "host"})
