"""Fixtures for the interop tests, which check the tessera CLI against zarr-python 3 and tensorstore.

The binary is TESSERA_BIN, or build/release/tessera under the repository root. A missing binary is
a failure, not a skip: CI builds it before running these tests (scripts/test.sh).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from interop_support import Tessera, env_binary

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/s3_support.py


@pytest.fixture(scope="session")
def tessera() -> Tessera:
    binary = env_binary()
    if not binary.is_file():
        pytest.fail(f"tessera binary not found at {binary}: build it with scripts/build.sh "
                    f"(or point TESSERA_BIN at one)", pytrace=False)
    return Tessera(binary)


@pytest.fixture
def run_tessera(tessera):
    """run_tessera(args, input_bytes=None) -> CompletedProcess; does not check the exit code."""
    return tessera.run


@pytest.fixture
def tessera_read(tessera):
    """tessera_read(store, slice_expr, dtype, expected_shape) -> numpy array."""
    return tessera.read


@pytest.fixture
def tessera_write(tessera):
    """tessera_write(out, array, chunk, shard_chunks=None, codec=None, ...) -> CompletedProcess."""
    return tessera.write


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's id, so each test's data is fixed across runs."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(request.node.nodeid)) % (2**32)
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def s3_server():
    """One real S3 server (SeaweedFS on 127.0.0.1, tests/s3_support.py) for the whole session, started
    when a test first asks for it and stopped at the end; each module works in its own bucket."""
    from s3_support import S3Server

    with S3Server() as server:
        yield server


@pytest.fixture
def s3_env(server, monkeypatch):
    """The AWS variables that point tessera (CLI children, the Python package and Python children) at
    the session's server. SERVER is the module's fixture: the session's server with its bucket made."""
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    return server


@pytest.fixture
def no_aws_env(monkeypatch, tmp_path):
    """No AWS_* variable, tessera's default retry budget and addressing style, and a HOME without AWS
    files (returned, for a test to write its own): only the settings a test passes explicitly, as
    storage_options or --storage-option flags, can reach a store."""
    for name in list(os.environ):
        if name.startswith("AWS_") or name in ("TESSERA_RETRY_TIMEOUT_S", "TESSERA_S3_ADDRESSING_STYLE"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path
