"""Tests of the S3 test support (tests/s3_support.py, scripts/s3_server.sh) against a real server.

One SeaweedFS server serves the module; each test that needs a proxy gets a fresh FaultProxy in
front of it. Raw requests are signed here (SigV4 with an unsigned payload) and sent with
http.client, so that status codes, connection reuse and resets are visible, which S3 client
libraries hide behind their retries.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import os
import signal
import socket
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from s3_support import (  # tests/ is on the path (conftest.py)
    S3_SERVER_SCRIPT, FaultProxy, S3Server, tensorstore_s3_kvstore, zarr_s3_store)

BUCKET = "interop-s3"


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


@pytest.fixture
def proxy(server):
    with FaultProxy(server.endpoint, seed=7) as p:
        yield p


# --- raw signed requests ----------------------------------------------------------------------

def sign(method: str, host: str, path: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    """HEADERS plus Host, X-Amz-Date, X-Amz-Content-Sha256 and Authorization: an AWS SigV4 signature
    (unsigned payload) for a request to HOST (as in the Host header) with PATH (no query)."""
    signed = {k.lower(): v for k, v in (headers or {}).items()}
    amz_date = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    signed.update({"host": host, "x-amz-date": amz_date, "x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
    names = sorted(signed)
    canonical = "\n".join([method, path, "", "".join(f"{n}:{signed[n].strip()}\n" for n in names),
                           ";".join(names), "UNSIGNED-PAYLOAD"])
    scope = f"{amz_date[:8]}/us-east-1/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = b"AWS4testsecret"
    for part in (amz_date[:8], "us-east-1", "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    signed["authorization"] = (f"AWS4-HMAC-SHA256 Credential=testkey/{scope}, "
                               f"SignedHeaders={';'.join(names)}, Signature={signature}")
    return signed


def connect(base_url: str) -> http.client.HTTPConnection:
    parts = urlsplit(base_url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)


def request(conn: http.client.HTTPConnection, method: str, path: str, body=None,
            headers: dict[str, str] | None = None, unsigned_headers: dict[str, str] | None = None,
            chunked: bool = False) -> tuple[int, dict[str, str], bytes]:
    """Sends a signed request on CONN; returns status, headers (lower-case names) and body."""
    all_headers = {**sign(method, f"{conn.host}:{conn.port}", path, headers), **(unsigned_headers or {})}
    conn.request(method, path, body=body, headers=all_headers, encode_chunked=chunked)
    response = conn.getresponse()
    data = response.read()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def fetch(base_url: str, method: str, path: str, body=None, headers=None):
    """request() on a connection of its own."""
    conn = connect(base_url)
    try:
        return request(conn, method, path, body, headers)
    finally:
        conn.close()


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def running(pid: int) -> bool:
    """Whether PID runs (a zombie does not: init may take its time to reap the stopped server)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def payload(n: int) -> bytes:
    """N bytes with every byte value, CR and LF included, so that any rewriting shows."""
    return (bytes(range(256)) * (n // 256 + 1))[:n]


# --- the server -------------------------------------------------------------------------------

def test_server_starts_restarts_after_a_crash_and_stops():
    s = S3Server().start()
    try:
        directory, port, ports = s.directory, s.port, s.ports
        assert len(ports) == 8 and max(ports) < 32768  # below the ephemeral range
        assert s.env() == {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "testkey",
                           "AWS_SECRET_ACCESS_KEY": "testsecret", "AWS_REGION": "us-east-1"}
        assert fetch(s.endpoint, "GET", "/")[0] == 200
        assert all(listening(p) for p in ports)

        # A crashed run leaves its state and pid file; starting again in the same place works,
        # and leaves alone an unrelated process that has since been given the recorded PID.
        crashed = int((directory / "weed.pid").read_text())
        os.kill(crashed, signal.SIGKILL)
        while running(crashed):  # until its ports are free
            time.sleep(0.05)
        with subprocess.Popen(["sleep", "60"]) as unrelated:
            (directory / "weed.pid").write_text(f"{unrelated.pid}\n")
            subprocess.run([str(S3_SERVER_SCRIPT), "start", str(directory), str(port)], check=True)
            assert unrelated.poll() is None
            unrelated.kill()
        pid = int((directory / "weed.pid").read_text())
        assert pid != crashed and running(pid)
        assert fetch(s.endpoint, "GET", "/")[0] == 200
    finally:
        s.stop()
    assert not directory.exists()
    assert not running(pid)
    assert not any(listening(p) for p in ports)
    assert not [f for f in os.listdir("/tmp") if f.startswith("seaweedfs-") and
                any(f.endswith(f"-{p}.sock") for p in ports)]
    s.stop()  # a second stop does nothing


def test_script_refuses_a_directory_it_did_not_make(tmp_path):
    (tmp_path / "keep.txt").write_text("precious")
    for args in (["stop", str(tmp_path)], ["start", str(tmp_path), "18999"]):
        proc = subprocess.run([str(S3_SERVER_SCRIPT), *args], capture_output=True, text=True)
        assert proc.returncode != 0 and "refusing" in proc.stderr
    assert (tmp_path / "keep.txt").read_text() == "precious"


def test_buckets(server):
    server.create_bucket("second-bucket")
    server.create_bucket("second-bucket")  # exists already: fine
    status, _, body = fetch(server.endpoint, "GET", "/")
    assert status == 200 and b"<Name>second-bucket</Name>" in body and f"<Name>{BUCKET}</Name>".encode() in body
    with pytest.raises(RuntimeError, match="InvalidBucketName"):
        server.create_bucket("ab")  # shorter than 3 characters
    # Writes work in many buckets (SeaweedFS's default volume growth fails at the third).
    for i in range(4):
        server.create_bucket(f"many-{i}")
        assert fetch(server.endpoint, "PUT", f"/many-{i}/x", b"1")[0] == 200


def test_anonymous_requests_are_refused(server):
    conn = connect(server.endpoint)
    conn.request("GET", f"/{BUCKET}/")
    response = conn.getresponse()
    assert response.status == 403 and b"<Code>AccessDenied</Code>" in response.read()


# --- the peers' S3 stores ---------------------------------------------------------------------

def test_tensorstore_and_zarr_round_trip(server):
    import tensorstore as ts
    import zarr

    data = np.arange(7 * 5, dtype=np.uint16).reshape(7, 5) * 3
    spec = {"driver": "zarr3", "kvstore": tensorstore_s3_kvstore(server, BUCKET, "ts_array/")}
    ts.open(spec, create=True, dtype=ts.uint16, shape=data.shape,
            chunk_layout=ts.ChunkLayout(chunk_shape=[3, 2])).result().write(data).result()
    np.testing.assert_array_equal(ts.open(spec).result().read().result(), data)

    zarr_store = zarr_s3_store(server, BUCKET, "zarr_array")
    zarr.create_array(zarr_store, shape=data.shape, chunks=(4, 4), dtype="uint16")[...] = data
    np.testing.assert_array_equal(zarr.open_array(zarr_store, mode="r")[...], data)

    # Each reads what the other wrote.
    np.testing.assert_array_equal(
        zarr.open_array(zarr_s3_store(server, BUCKET, "ts_array", read_only=True), mode="r")[...], data)
    other = {"driver": "zarr3", "kvstore": tensorstore_s3_kvstore(server, BUCKET, "zarr_array/")}
    np.testing.assert_array_equal(ts.open(other).result().read().result(), data)


def test_peers_through_a_faulty_proxy(server, proxy):
    """The peers' own retries (made quick here) get a write and a read through the faults."""
    import tensorstore as ts
    import zarr

    # obstore does not retry a response whose body a reset cuts short: no resets for its write.
    proxy.configure(error_rate=0.2, throttle_rate=0.1)
    backoff = {"init_backoff": timedelta(milliseconds=10), "max_backoff": timedelta(milliseconds=100), "base": 2}
    store = zarr_s3_store(server, BUCKET, "faulty", endpoint=proxy.url,
                          retry_config={"max_retries": 20, "backoff": backoff, "retry_timeout": timedelta(seconds=20)})
    data = np.arange(12 * 12, dtype=np.int32).reshape(12, 12)
    zarr.create_array(store, shape=data.shape, chunks=(4, 4), dtype="int32")[...] = data
    written = proxy.fault_counts
    assert written["throttle"] and written["slow_down"] + written["internal_error"]

    proxy.configure(error_rate=0.1, throttle_rate=0.1, reset_rate=0.2, reset_before_rate=0.1)
    proxy.clear()
    kvstore = tensorstore_s3_kvstore(server, BUCKET, "faulty/", endpoint=proxy.url)
    kvstore["context"] = {"s3_request_retries": {"max_retries": 20, "initial_delay": "10ms", "max_delay": "100ms"}}
    np.testing.assert_array_equal(ts.open({"driver": "zarr3", "kvstore": kvstore}).result().read().result(), data)
    assert proxy.fault_counts["reset"] and proxy.fault_counts["reset_before"]


# --- the proxy: exact forwarding --------------------------------------------------------------

def test_proxy_forwards_curl_requests_exactly(server, proxy, tmp_path):
    data = payload(5000)
    (tmp_path / "data").write_bytes(data)
    curl = ["curl", "-sS", "--fail", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "testkey:testsecret",
            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
    key = f"{proxy.url}/{BUCKET}/curl/object"
    subprocess.run([*curl, "-T", str(tmp_path / "data"), key], check=True, capture_output=True)
    ranged = subprocess.run([*curl, "-H", "Range: bytes=100-1099", key], check=True, capture_output=True)
    assert ranged.stdout == data[100:1100]
    assert fetch(server.endpoint, "GET", f"/{BUCKET}/curl/object")[2] == data  # stored exactly
    assert [(r.method, r.target, r.range) for r in proxy.requests] == [
        ("PUT", f"/{BUCKET}/curl/object", None), ("GET", f"/{BUCKET}/curl/object", "bytes=100-1099")]


def test_proxy_keeps_connections_alive_with_any_body_framing(server, proxy):
    data = payload(300_000)
    conn = connect(proxy.url)
    path = f"/{BUCKET}/framing/object"
    assert request(conn, "PUT", path, data)[0] == 200  # Content-Length
    sock = conn.sock
    assert request(conn, "GET", path)[2] == data
    status, headers, body = request(conn, "GET", path, headers={"Range": "bytes=1000-1999"})
    assert (status, headers["content-range"], body) == (206, "bytes 1000-1999/300000", data[1000:2000])
    status, headers, body = request(conn, "HEAD", path)
    assert (status, headers["content-length"], body) == (200, "300000", b"")
    status, _, body = request(conn, "GET", f"/{BUCKET}/framing/missing")
    assert status == 404 and b"<Code>NoSuchKey</Code>" in body

    chunks = [data[i:i + 70_000] for i in range(0, len(data), 70_000)]
    assert request(conn, "PUT", path + "-chunked", iter(chunks), chunked=True)[0] == 200
    # http.client sends the body without waiting for the 100 Continue, which the proxy relays.
    status, _, _ = request(conn, "PUT", path + "-expect", data[:1000],
                           unsigned_headers={"Expect": "100-continue"})
    assert status == 200
    assert conn.sock is sock  # one connection throughout
    conn.close()
    assert fetch(server.endpoint, "GET", path + "-chunked")[2] == data
    assert fetch(server.endpoint, "GET", path + "-expect")[2] == data[:1000]
    assert proxy.method_counts == {"PUT": 3, "GET": 3, "HEAD": 1}
    assert proxy.fault_counts == {}


def test_proxy_forwards_encoded_keys_and_listings(server, proxy):
    import obstore

    store = zarr_s3_store(server, BUCKET, "encoded", endpoint=proxy.url).store  # obstore's S3Store
    keys = ["with space/a+b=c", "ünïcödé/x", "percent%25/y"]
    for i, key in enumerate(keys):
        obstore.put(store, key, payload(1000 + i))
    assert sorted(m["path"] for m in obstore.list(store).collect()) == sorted(keys)
    for i, key in enumerate(keys):
        assert bytes(obstore.get_range(store, key, start=10, end=500)) == payload(1000 + i)[10:500]
    assert proxy.method_counts == {"PUT": 3, "GET": 4}
    assert any("list-type=2" in r.target for r in proxy.requests)


def test_proxy_forwards_chunked_and_close_delimited_responses():
    """SeaweedFS always sends Content-Length; a stub server sends the other framings."""
    body = payload(50_000)

    class Stub(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if self.path == "/chunked":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in range(0, len(body), 7000):
                    piece = body[i:i + 7000]
                    self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\nX-Trailer: yes\r\n\r\n")
            else:  # no framing: the body ends with the connection
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True

        def log_message(self, *args):
            pass

    stub = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    try:
        with FaultProxy(f"http://127.0.0.1:{stub.server_address[1]}") as proxy:
            conn = connect(proxy.url)
            for _ in range(2):  # on one connection
                conn.request("GET", "/chunked")
                assert conn.getresponse().read() == body
            conn.request("GET", "/close-delimited")
            assert conn.getresponse().read() == body
            conn.close()

            proxy.configure(reset_rate=1.0)
            conn = connect(proxy.url)
            conn.request("GET", "/chunked")
            with pytest.raises((ConnectionError, http.client.IncompleteRead)):
                conn.getresponse().read()
            conn.close()
    finally:
        stub.shutdown()
        stub.server_close()


def test_proxy_reconnects_when_the_server_closes_an_idle_connection(server):
    # A kept-alive upstream connection the server has closed reads as an immediate end of stream;
    # shutting down the reading side of the proxy's upstream socket does the same.
    with FaultProxy(server.endpoint) as proxy:
        conn = connect(proxy.url)
        path = f"/{BUCKET}/reconnect"
        assert request(conn, "PUT", path, b"abc")[0] == 200
        with proxy._lock:
            upstream = [s for s in proxy._sockets if s.getpeername()[1] == server.port]
        assert len(upstream) == 1
        upstream[0].shutdown(socket.SHUT_RD)
        assert request(conn, "GET", path)[2] == b"abc"
        conn.close()


# --- the proxy: faults ------------------------------------------------------------------------

def test_error_faults_answer_without_forwarding(server, proxy):
    proxy.configure(error_rate=1.0)
    conn = connect(proxy.url)
    seen = set()
    for i in range(12):
        status, headers, body = request(conn, "PUT", f"/{BUCKET}/errors/{i}", b"data")
        code = {503: b"<Code>SlowDown</Code>", 500: b"<Code>InternalError</Code>"}[status]
        assert code in body and headers["content-type"] == "application/xml"
        assert f"<Resource>/{BUCKET}/errors/{i}</Resource>".encode() in body
        seen.add(status)
    assert seen == {500, 503}
    assert fetch(server.endpoint, "HEAD", f"/{BUCKET}/errors/0")[0] == 404  # never forwarded
    proxy.configure(error_rate=0.0)
    assert request(conn, "PUT", f"/{BUCKET}/errors/0", b"data")[0] == 200  # same connection
    counts = proxy.fault_counts
    assert counts["slow_down"] + counts["internal_error"] == 12 and proxy.request_count == 13


def test_throttle_fault(proxy):
    proxy.configure(throttle_rate=1.0)
    status, _, body = fetch(proxy.url, "GET", f"/{BUCKET}/anything")
    assert status == 429 and b"<Code>TooManyRequests</Code>" in body
    status, headers, body = fetch(proxy.url, "HEAD", f"/{BUCKET}/anything")
    assert status == 429 and body == b"" and int(headers["content-length"]) > 0
    assert proxy.fault_counts == {"throttle": 2}


def test_reset_before_response(server, proxy):
    proxy.configure(reset_before_rate=1.0)
    with pytest.raises(ConnectionError):
        fetch(proxy.url, "PUT", f"/{BUCKET}/reset-before", b"data")
    assert fetch(server.endpoint, "HEAD", f"/{BUCKET}/reset-before")[0] == 404  # never forwarded
    assert proxy.fault_counts == {"reset_before": 1}


def test_reset_in_the_middle_of_the_body(server, proxy):
    data = payload(200_000)
    assert fetch(server.endpoint, "PUT", f"/{BUCKET}/reset", data)[0] == 200
    proxy.configure(reset_rate=1.0)
    conn = connect(proxy.url)
    conn.request("GET", f"/{BUCKET}/reset", headers=sign("GET", f"{conn.host}:{conn.port}", f"/{BUCKET}/reset"))
    response = conn.getresponse()
    assert response.status == 200 and response.getheader("Content-Length") == "200000"
    received = bytearray()
    with pytest.raises((ConnectionError, http.client.IncompleteRead)):
        while chunk := response.read1(65536):
            received += chunk
        response.read(1)  # a clean end of stream short of Content-Length
    assert 0 < len(received) < len(data) and bytes(received) == data[:len(received)]

    # A reset request was forwarded: the PUT happened although its client saw only the reset.
    with pytest.raises(ConnectionError):
        fetch(proxy.url, "PUT", f"/{BUCKET}/reset-put", b"stored")
    assert fetch(server.endpoint, "GET", f"/{BUCKET}/reset-put")[2] == b"stored"
    assert proxy.fault_counts == {"reset": 2}


def test_delay_fault(proxy):
    proxy.configure(delay_rate=1.0, delay_s=0.25)
    path = f"/{BUCKET}/delayed"
    start = time.monotonic()
    assert fetch(proxy.url, "PUT", path, b"late")[0] == 200
    assert fetch(proxy.url, "GET", path)[2] == b"late"
    assert time.monotonic() - start >= 0.5
    proxy.configure(delay_rate=0.0)
    start = time.monotonic()
    assert fetch(proxy.url, "GET", path)[2] == b"late"
    assert time.monotonic() - start < 0.25
    assert proxy.fault_counts == {"delay": 2}


def test_faults_are_deterministic_per_request(server):
    paths = [f"/{BUCKET}/determinism/{i}" for i in range(40)]
    policy = dict(error_rate=0.3, throttle_rate=0.2, reset_before_rate=0.1)

    def faults(seed, order):
        with FaultProxy(server.endpoint, seed=seed, **policy) as proxy:
            for path in order:
                try:
                    fetch(proxy.url, "HEAD", path)
                except ConnectionError:
                    pass
            return {r.target: r.fault for r in proxy.requests}

    first = faults(1, paths)
    assert faults(1, paths[::-1]) == first  # arrival order does not matter
    assert faults(2, paths) != first
    kinds = set(first.values())
    assert {"slow_down", "internal_error", "throttle", "reset_before", None} <= kinds

    # A repeated request (a retry) is a new draw, and a new seed restarts the draws.
    with FaultProxy(server.endpoint, seed=1, **policy) as proxy:
        for _ in range(2):
            for path in paths:
                try:
                    fetch(proxy.url, "HEAD", path)
                except ConnectionError:
                    pass
        records = proxy.requests
        assert {r.target: r.fault for r in records[:40]} == first
        assert [r.fault for r in records[40:]] != [r.fault for r in records[:40]]


def test_counters_and_request_log(proxy):
    path = f"/{BUCKET}/counted"
    fetch(proxy.url, "PUT", path, b"0123456789")
    fetch(proxy.url, "GET", path, headers={"Range": "bytes=2-5"})
    fetch(proxy.url, "GET", path)
    proxy.configure(throttle_rate=1.0)
    fetch(proxy.url, "DELETE", path)
    assert proxy.request_count == 4
    assert proxy.method_counts == {"GET": 2, "PUT": 1, "DELETE": 1}
    assert proxy.fault_counts == {"throttle": 1}
    assert [(r.method, r.range, r.fault) for r in proxy.requests] == [
        ("PUT", None, None), ("GET", "bytes=2-5", None), ("GET", None, None), ("DELETE", None, "throttle")]
    proxy.clear()
    assert proxy.request_count == 0 and proxy.requests == [] and not proxy.method_counts


def test_configure_rejects_bad_policies(proxy):
    with pytest.raises(ValueError, match="sum to at most 1"):
        proxy.configure(error_rate=0.7, reset_rate=0.4)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\]"):
        proxy.configure(delay_rate=-0.1)
    with pytest.raises(ValueError, match="delay_s must not be negative"):
        proxy.configure(delay_s=-1)


def test_proxy_stops_with_open_connections(server):
    proxy = FaultProxy(server.endpoint, delay_rate=1.0, delay_s=30).start()
    port = int(proxy.url.rsplit(":", 1)[1])
    idle = connect(proxy.url)
    idle.connect()
    outcome = []

    def delayed_request():
        try:
            outcome.append(fetch(proxy.url, "GET", "/"))
        except ConnectionError as e:
            outcome.append(e)

    waiting = threading.Thread(target=delayed_request)
    waiting.start()
    while proxy.request_count == 0:
        time.sleep(0.01)
    start = time.monotonic()
    proxy.stop()
    waiting.join(timeout=5)
    assert time.monotonic() - start < 2
    assert isinstance(outcome[0], ConnectionError)  # dropped, not answered
    idle.close()
    assert not listening(port)
