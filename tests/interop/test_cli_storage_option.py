"""`--storage-option KEY=VALUE`: the CLI's store settings, the same ones the Python API takes as
storage_options. Every test here runs with no AWS_* variable and AWS files that name nothing, so
only the flags can reach the SeaweedFS server (tests/s3_support.py).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from interop_support import random_data
from s3_support import prefix_for

BUCKET = "cli-storage-option"


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


def flags_for(server) -> list[str]:
    flags = []
    for key, value in {"endpoint_url": server.endpoint, "region": server.region, "access_key_id": server.access_key,
                       "secret_access_key": server.secret_key, "retry_timeout": "30"}.items():
        flags += ["--storage-option", f"{key}={value}"]
    return flags


def test_stream_read_info_and_convert_reach_the_server_by_the_flags_alone(tessera, server, no_aws_env, request, rng,
                                                                          tmp_path):
    flags = flags_for(server)
    prefix = prefix_for(request)
    src, dst = f"s3://{BUCKET}/{prefix}/src.zarr", f"s3://{BUCKET}/{prefix}/dst.zarr"
    data = random_data(rng, "uint16", (6, 10, 8))
    tessera.run_ok(["stream", src, "--dtype", "uint16", "--shape", "6,10,8", "--chunk", "2,5,4", *flags],
                   data.tobytes())
    got = np.frombuffer(tessera.run_ok(["read", src, *flags]).stdout, "<u2").reshape(data.shape)
    assert np.array_equal(got, data)
    info = json.loads(tessera.run_ok(["info", src, "--json", *flags]).stdout)
    assert info["shape"] == [6, 10, 8] and info["chunk_shape"] == [2, 5, 4]
    tessera.run_ok(["convert", src, dst, "--chunk", "3,5,8", *flags])
    got = np.frombuffer(tessera.run_ok(["read", dst, "--slice=1:5", *flags]).stdout, "<u2").reshape(4, 10, 8)
    assert np.array_equal(got, data[1:5])
    # Without the endpoint and keys nothing names the server: the same read fails (after a short
    # retry budget, itself a flag).
    assert tessera.run(["read", src, "--storage-option", "retry_timeout=1"], timeout=60).returncode != 0


def test_info_lists_the_datasets_of_an_hdf5_file_on_s3(tessera, server, no_aws_env, request, rng):
    # `info` of an HDF5 file without --dataset lists its datasets; the listing opened the location
    # as a local path, so an S3 object was "not found" though reads of it worked.
    flags = flags_for(server)
    url = f"s3://{BUCKET}/{prefix_for(request)}/listed.h5"
    data = random_data(rng, "int16", (7, 5))
    tessera.run_ok(["stream", url, "--format", "hdf5", "--dtype", "int16", "--shape", "7,5", "--chunk", "4,5", *flags],
                   data.tobytes())
    info = json.loads(tessera.run_ok(["info", url, "--json", *flags]).stdout)
    assert info["format"] == "hdf5", info
    assert [(d["dataset"], d["shape"], d["dtype"]) for d in info["datasets"]] == [("/data", [7, 5], "int16")], info
    assert "/data: int16 [7, 5]" in tessera.run_ok(["info", url, *flags]).stdout.decode()


@pytest.mark.parametrize("flag, named", [
    ("endpoint", "expected KEY=VALUE"),
    ("endpoint=http://x", "unknown key \"endpoint\""),
    ("anonymous=maybe", "anonymous"),
    ("retry_timeout=-1", "retry_timeout"),
])
def test_a_bad_storage_option_is_an_error_naming_the_flag_and_key(tessera, tmp_path, flag, named):
    proc = tessera.run(["info", str(tmp_path), "--storage-option", flag])
    message = proc.stderr.decode()
    assert proc.returncode != 0 and "--storage-option" in message and named in message, message
