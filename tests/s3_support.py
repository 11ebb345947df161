"""A real S3 server for tests, clients of it, and a fault-injecting proxy in front of it.

S3Server starts a throw-away SeaweedFS server on 127.0.0.1 (scripts/s3_server.sh); tensorstore's and
zarr-python's (obstore) S3 stores point at it with tensorstore_s3_kvstore and zarr_s3_store.
FaultProxy sits between a client and the server, forwards requests unchanged and injects S3-style
errors, throttling, delays and connection resets by a seeded policy.

Plain Python with no pytest dependency; zarr and obstore are imported only when used.

    with S3Server() as server, FaultProxy(server.endpoint, seed=1) as proxy:
        server.create_bucket("data")
        proxy.configure(error_rate=0.2)
        env = {**os.environ, **server.env(), "AWS_ENDPOINT_URL": proxy.url}
"""

from __future__ import annotations

import atexit
import os
import hashlib
import random
import socket
import socketserver
import struct
import subprocess
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Optional
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
S3_SERVER_SCRIPT = REPO_ROOT / "scripts" / "s3_server.sh"

ACCESS_KEY = "testkey"
SECRET_KEY = "testsecret"
REGION = "us-east-1"

# The server listens on its S3 port plus these offsets (master, volume, filer; gRPC is +10000).
_PORT_OFFSETS = (0, 1000, 2000, 3000, 10000, 11000, 12000, 13000)
# Base ports are drawn below this so that every port stays under Linux's ephemeral range (32768
# and up), where outgoing connections could take one between the check and the server's bind.
_MAX_BASE_PORT = 32768 - 1 - _PORT_OFFSETS[-1]
_MIN_BASE_PORT = 10000


def _port_free(port: int) -> bool:
    """Whether a listener could bind 127.0.0.1:PORT (SO_REUSEADDR, like the server's Go listeners,
    so connections lingering in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _pick_base_port() -> int:
    # Not seeded: concurrent test processes must not draw the same ports.
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(_MIN_BASE_PORT, _MAX_BASE_PORT)
        if all(_port_free(port + offset) for offset in _PORT_OFFSETS):
            return port
    raise RuntimeError("no free set of ports for an S3 server on 127.0.0.1")


class S3Server:
    """A SeaweedFS S3 server on 127.0.0.1 with all state in a temporary directory.

    A context manager (start on enter, stop on exit); stop also runs at interpreter exit if the
    server is still up. PORT None picks free ports (the S3 port and the seven others it implies).
    Keys and region are fixed: testkey / testsecret / us-east-1. Anonymous requests are refused.
    """

    _START_ATTEMPTS = 3  # with picked ports: another process may take one before the server binds

    def __init__(self, port: Optional[int] = None):
        self._requested_port = port
        self.port: Optional[int] = None
        self.directory: Optional[Path] = None
        self.access_key = ACCESS_KEY
        self.secret_key = SECRET_KEY
        self.region = REGION

    @property
    def endpoint(self) -> str:
        if self.port is None:
            raise RuntimeError("the S3 server is not running")
        return f"http://127.0.0.1:{self.port}"

    @property
    def ports(self) -> list[int]:
        """Every port the server listens on: S3, master, volume, filer and their gRPC ports."""
        if self.port is None:
            raise RuntimeError("the S3 server is not running")
        return [self.port + offset for offset in _PORT_OFFSETS]

    @property
    def credentials_file(self) -> Path:
        """An AWS shared credentials file whose [default] profile holds the server's keys."""
        return self._require_directory() / "aws" / "credentials"

    @property
    def config_file(self) -> Path:
        """An AWS config file whose [default] profile names the server's region."""
        return self._require_directory() / "aws" / "config"

    def start(self) -> S3Server:
        if self.port is not None:
            raise RuntimeError("the S3 server is already running")
        for attempt in range(self._START_ATTEMPTS):
            port = self._requested_port or _pick_base_port()
            # A short path: the server's Unix sockets live in it.
            directory = Path(tempfile.mkdtemp(prefix="tessera-s3-"))
            proc = subprocess.run([str(S3_SERVER_SCRIPT), "start", str(directory), str(port)],
                                  capture_output=True, text=True)
            if proc.returncode == 0:
                break
            subprocess.run([str(S3_SERVER_SCRIPT), "stop", str(directory)], capture_output=True)
            retry = self._requested_port is None and "in use" in proc.stderr
            if not retry or attempt + 1 == self._START_ATTEMPTS:
                raise RuntimeError(f"could not start the S3 server on port {port}:\n{proc.stderr}")
        self.port, self.directory = port, directory
        atexit.register(self.stop)
        self._write_aws_files()
        return self

    def stop(self) -> None:
        """Stops the server (up to about 5 s) and removes its directory; a no-op when not running."""
        if self.directory is None:
            return
        atexit.unregister(self.stop)
        directory, self.directory, self.port = self.directory, None, None
        proc = subprocess.run([str(S3_SERVER_SCRIPT), "stop", str(directory)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"could not stop the S3 server in {directory}:\n{proc.stderr}")

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def create_bucket(self, name: str) -> None:
        """Creates bucket NAME (at least 3 characters); an existing bucket is fine."""
        proc = subprocess.run([str(S3_SERVER_SCRIPT), "bucket", str(self.port), name],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)

    def env(self) -> dict[str, str]:
        """The standard AWS variables for a child process, to merge over os.environ."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
        }

    def _require_directory(self) -> Path:
        if self.directory is None:
            raise RuntimeError("the S3 server is not running")
        return self.directory

    def _write_aws_files(self) -> None:
        self.credentials_file.parent.mkdir()
        self.credentials_file.write_text(
            f"[default]\naws_access_key_id = {self.access_key}\n"
            f"aws_secret_access_key = {self.secret_key}\n")
        self.config_file.write_text(f"[default]\nregion = {self.region}\n")


def tensorstore_s3_kvstore(server: S3Server, bucket: str, path: str = "",
                           endpoint: Optional[str] = None) -> dict[str, Any]:
    """A tensorstore kvstore spec for its "s3" driver over BUCKET/PATH on SERVER.

    ENDPOINT replaces the server's (a FaultProxy's url). The keys come from the server's credentials
    file ("profile" credentials), so the caller's environment needs no AWS variables; tensorstore's
    "default" credentials would instead fall back to the EC2 metadata service, unreachable here.
    """
    return {
        "driver": "s3",
        "bucket": bucket,
        "path": path,
        "endpoint": endpoint or server.endpoint,
        "aws_region": server.region,
        # The profile provider needs both files to exist, even with nothing it uses in config.
        "aws_credentials": {
            "type": "profile",
            "profile": "default",
            "credentials_file": str(server.credentials_file),
            "config_file": str(server.config_file),
        },
    }


def zarr_s3_store(server: S3Server, bucket: str, prefix: str = "", endpoint: Optional[str] = None,
                  read_only: bool = False, **s3_options: Any):
    """A zarr-python 3 store (zarr.storage.ObjectStore over obstore's S3Store) on BUCKET/PREFIX.

    Path-style requests over plain HTTP. ENDPOINT replaces the server's (a FaultProxy's url);
    S3_OPTIONS go to obstore.store.S3Store (retry_config=..., for one).
    """
    import obstore.store
    import zarr.storage

    store = obstore.store.S3Store(
        bucket, prefix=prefix or None, endpoint=endpoint or server.endpoint, region=server.region,
        access_key_id=server.access_key, secret_access_key=server.secret_key,
        virtual_hosted_style_request=False, client_options={"allow_http": True}, **s3_options)
    return zarr.storage.ObjectStore(store, read_only=read_only)


# --- Fault-injecting proxy --------------------------------------------------------------------

FAULT_KINDS = ("slow_down", "internal_error", "throttle", "delay", "reset", "reset_before")

# Injected error responses: status line and S3 error code / message.
_ERROR_RESPONSES = {
    "slow_down": ("503 Slow Down", "SlowDown", "Please reduce your request rate."),
    "internal_error": ("500 Internal Server Error", "InternalError",
                       "We encountered an internal error. Please try again."),
    "throttle": ("429 Too Many Requests", "TooManyRequests", "Please reduce your request rate."),
}

_MAX_LINE = 65536


@dataclass(frozen=True)
class ProxyRequest:
    """One request the proxy received, and the fault it injected (None: forwarded untouched)."""
    method: str
    target: str  # as sent: path and query, percent-encoded
    range: Optional[str]  # the Range header
    fault: Optional[str]


class _ProtocolError(Exception):
    """A malformed or truncated HTTP message; the proxy drops the connection."""


@dataclass
class _Head:
    raw: bytes  # the start line and headers, byte-exact, with the blank line
    start: list[str]  # request: method, target, version; response: version, status, reason
    headers: dict[str, str]  # lower-case names; repeated headers joined by ", "

    @property
    def status(self) -> int:
        try:
            return int(self.start[1])
        except ValueError:
            raise _ProtocolError(f"bad status line {self.start!r}") from None

    def has_token(self, name: str, token: str) -> bool:
        return token in (t.strip().lower() for t in self.headers.get(name, "").split(","))


def _read_head(rfile: BinaryIO) -> Optional[_Head]:
    """The next message head, or None at a clean end of stream before it."""
    lines = []
    while True:
        line = rfile.readline(_MAX_LINE)
        if not line:
            if lines:
                raise _ProtocolError("end of stream inside a message head")
            return None
        if not line.endswith(b"\n"):
            raise _ProtocolError("header line too long")
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            break
    start = lines[0].decode("latin-1").split(None, 2)
    if len(start) < 2:
        raise _ProtocolError(f"bad start line {lines[0]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:-1]:
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise _ProtocolError(f"bad header line {line!r}")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return _Head(b"".join(lines), start, headers)


def _read_exact(rfile: BinaryIO, n: int) -> bytes:
    data = rfile.read(n)
    if len(data) != n:
        raise _ProtocolError(f"end of stream after {len(data)} of {n} body bytes")
    return data


def _read_chunked(rfile: BinaryIO) -> bytes:
    """A chunked body as sent, with its framing, chunk extensions and trailers."""
    parts = []
    while True:
        line = rfile.readline(_MAX_LINE)
        if not line.endswith(b"\n"):
            raise _ProtocolError("truncated chunk size line")
        parts.append(line)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise _ProtocolError(f"bad chunk size line {line!r}") from None
        if size == 0:
            break
        parts.append(_read_exact(rfile, size + 2))  # the data and its CRLF
    while True:  # trailers, up to the blank line
        line = rfile.readline(_MAX_LINE)
        if not line.endswith(b"\n"):
            raise _ProtocolError("truncated trailer")
        parts.append(line)
        if line in (b"\r\n", b"\n"):
            return b"".join(parts)


def _has_body(head: _Head) -> bool:
    return "transfer-encoding" in head.headers or "content-length" in head.headers


def _read_body(rfile: BinaryIO, head: _Head) -> bytes:
    """A request's body, or a response's body framed by Transfer-Encoding or Content-Length."""
    if head.has_token("transfer-encoding", "chunked"):
        return _read_chunked(rfile)
    if "content-length" in head.headers:
        try:
            length = int(head.headers["content-length"])
        except ValueError:
            raise _ProtocolError(f"bad Content-Length {head.headers['content-length']!r}") from None
        return _read_exact(rfile, length)
    return b""


def _response_has_body(request: _Head, response: _Head) -> bool:
    return request.start[0] != "HEAD" and response.status >= 200 and response.status not in (204, 304)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed or never connected


def _reset(sock: socket.socket) -> None:
    """Closes SOCK with a TCP reset (SO_LINGER 0) instead of an orderly shutdown."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


class _Upstream:
    """A keep-alive connection to the upstream server, opened on first use."""

    def __init__(self, proxy: FaultProxy):
        self._proxy = proxy
        self.sock: Optional[socket.socket] = None
        self.rfile: Optional[BinaryIO] = None
        self.reused = False  # whether the open connection already carried a request

    def send(self, data: bytes) -> None:
        if self.sock is None:
            self.sock = socket.create_connection(self._proxy._upstream_address, timeout=120)
            self.rfile = self.sock.makefile("rb")
            self._proxy._track(self.sock)
            self.reused = False
        self.sock.sendall(data)

    def close(self) -> None:
        if self.sock is not None:
            self._proxy._untrack(self.sock)
            self.rfile.close()
            self.sock.close()
            self.sock = self.rfile = None
            self.reused = False


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.server.proxy._serve(self.request)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class FaultProxy:
    """An HTTP/1.1 proxy on 127.0.0.1 in front of UPSTREAM (an S3 server's base URL), injecting faults.

    Requests and responses are forwarded byte for byte, Host header included: SigV4 signs the Host
    the client sent (the proxy's address), and SeaweedFS checks the signature against the Host it
    receives. Clients keep connections alive; bodies may be chunked or have a Content-Length (each
    is held whole in memory: test-sized objects), and Expect: 100-continue works. Each request gets at most one fault, chosen with these probabilities:

      error_rate         answer 503 SlowDown or 500 InternalError (S3 XML body), not forwarded
      throttle_rate      answer 429 TooManyRequests, not forwarded
      reset_before_rate  reset the connection before any response, not forwarded
      reset_rate         forward, then reset the connection halfway through the response body
                         (before the head when there is no body)
      delay_rate         forward, then wait delay_s before answering

    The draws are deterministic: each comes from a hash of the seed, the request's method, target
    and Range, and how many times that same request came before, so a given set of requests gets
    the same faults whatever the order or concurrency in which they arrive (a retry is a new draw).
    configure() changes the policy while running. Every request is recorded (requests,
    request_count, method_counts, fault_counts; clear() forgets them).
    """

    def __init__(self, upstream: str, *, seed: int = 0, error_rate: float = 0.0,
                 throttle_rate: float = 0.0, delay_rate: float = 0.0, delay_s: float = 0.5,
                 reset_rate: float = 0.0, reset_before_rate: float = 0.0):
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"upstream must be an http:// URL, not {upstream!r}")
        self._upstream_address = (parts.hostname, parts.port or 80)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._records: list[ProxyRequest] = []
        self._seen: Counter[tuple[str, str, str]] = Counter()
        self._rates: dict[str, float] = {}
        self._seed = 0
        self._delay_s = 0.0
        self.configure(seed=seed, error_rate=error_rate, throttle_rate=throttle_rate,
                       delay_rate=delay_rate, delay_s=delay_s, reset_rate=reset_rate,
                       reset_before_rate=reset_before_rate)
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None

    # -- policy and counters

    def configure(self, *, seed: Optional[int] = None, error_rate: Optional[float] = None,
                  throttle_rate: Optional[float] = None, delay_rate: Optional[float] = None,
                  delay_s: Optional[float] = None, reset_rate: Optional[float] = None,
                  reset_before_rate: Optional[float] = None) -> None:
        """Changes the given settings; the others keep their values. A new seed restarts the draws."""
        given = {"reset_before": reset_before_rate, "error": error_rate, "throttle": throttle_rate,
                 "reset": reset_rate, "delay": delay_rate}
        with self._lock:
            rates = dict(self._rates)
            rates.update({k: float(v) for k, v in given.items() if v is not None})
            rates = {k: rates.get(k, 0.0) for k in given}  # fixed order: the draw's intervals
            if any(not 0.0 <= r <= 1.0 for r in rates.values()) or sum(rates.values()) > 1.0 + 1e-9:
                raise ValueError(f"rates must be in [0, 1] and sum to at most 1: {rates}")
            if delay_s is not None:
                if delay_s < 0:
                    raise ValueError("delay_s must not be negative")
                self._delay_s = float(delay_s)
            self._rates = rates
            if seed is not None:
                self._seed = seed
                self._seen.clear()

    @property
    def requests(self) -> list[ProxyRequest]:
        with self._lock:
            return list(self._records)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._records)

    @property
    def method_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(r.method for r in self._records)

    @property
    def fault_counts(self) -> Counter[str]:
        """Injected faults by kind (FAULT_KINDS)."""
        with self._lock:
            return Counter(r.fault for r in self._records if r.fault is not None)

    def clear(self) -> None:
        """Forgets the recorded requests (the draws go on from where they are)."""
        with self._lock:
            self._records.clear()

    def _choose_fault(self, head: _Head) -> Optional[str]:
        method, target = head.start[0], head.start[1]
        range_header = head.headers.get("range")
        key = (method, target, range_header or "")
        with self._lock:
            occurrence = self._seen[key]
            self._seen[key] += 1
            digest = hashlib.sha256(repr((self._seed, key, occurrence)).encode()).digest()
            u = int.from_bytes(digest[:8], "big") / 2**64
            fault = None
            for kind, rate in self._rates.items():
                if u < rate:
                    fault = kind
                    break
                u -= rate
            if fault == "error":
                fault = "slow_down" if digest[8] < 128 else "internal_error"
            self._records.append(ProxyRequest(method, target, range_header, fault))
        return fault

    # -- life cycle

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the proxy is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FaultProxy:
        if self._server is not None:
            raise RuntimeError("the proxy is already running")
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="FaultProxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops accepting, drops open connections and waits for the connection threads."""
        if self._server is None:
            return
        with self._lock:
            self._stopping.set()
            open_sockets = list(self._sockets)
        self._server.shutdown()
        self._thread.join()
        for sock in open_sockets:  # wakes threads blocked reading from idle connections
            _shutdown(sock)
        self._server.server_close()  # joins the connection threads
        self._server = self._thread = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)
            if self._stopping.is_set():  # stop() has already shut down the sockets it knew of
                _shutdown(sock)

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    # -- forwarding

    def _serve(self, client: socket.socket) -> None:
        """Serves one client connection until either side closes it or a fault ends it."""
        self._track(client)
        rfile = client.makefile("rb")
        upstream = _Upstream(self)
        outcome = "keep"
        try:
            while outcome == "keep" and not self._stopping.is_set():
                request = _read_head(rfile)
                if request is None:
                    return
                outcome = self._exchange(client, rfile, upstream, request)
                if self._closes(request):
                    return
        except (OSError, _ProtocolError):
            pass  # a peer went away or broke the protocol: drop the connection
        finally:
            self._untrack(client)
            upstream.close()
            rfile.close()  # the socket closes only once its file is closed too
            if outcome == "reset":
                _reset(client)

    @staticmethod
    def _closes(request: _Head) -> bool:
        if request.has_token("connection", "close"):
            return True
        return request.start[-1] == "HTTP/1.0" and not request.has_token("connection", "keep-alive")

    def _exchange(self, client: socket.socket, rfile: BinaryIO, upstream: _Upstream,
                  request: _Head) -> str:
        """Handles one request. Returns what becomes of the client connection: "keep" it, "close"
        it, or "reset" it."""
        fault = self._choose_fault(request)
        expect_continue = request.has_token("expect", "100-continue") and _has_body(request)
        if fault == "reset_before":
            return "reset"
        if fault in _ERROR_RESPONSES:
            # Without Expect: 100-continue the body is on its way: read it to keep the connection.
            # With it, the client waits for a go-ahead and may or may not send the body: close.
            if not expect_continue:
                _read_body(rfile, request)
            client.sendall(self._error_response(fault, request, close=expect_continue))
            return "close" if expect_continue else "keep"

        if expect_continue:
            response = self._send_request(upstream, request.raw)
            if response.status == 100:
                client.sendall(response.raw)
                upstream.sock.sendall(_read_body(rfile, request))
                response = self._read_final_head(client, upstream)
            else:
                # Refused before the body: what the client does next is unknown, so close.
                client.sendall(response.raw + self._read_response_body(upstream, request, response))
                return "close"
        else:
            response = self._send_request(upstream, request.raw + _read_body(rfile, request))
            if response.status < 200:
                response = self._read_final_head(client, upstream, first=response)
        body = self._read_response_body(upstream, request, response)
        if response.has_token("connection", "close"):
            upstream.close()

        if fault == "delay" and self._stopping.wait(self._delay_s):
            return "close"  # stopped while waiting: the response is dropped
        if fault == "reset":
            # Half the body, at least a byte and short of all of it; with no body, nothing at all.
            if body:
                client.sendall(response.raw + body[:max(1, len(body) // 2)])
            return "reset"
        client.sendall(response.raw + body)
        # Closing the upstream connection ended a body without framing, or the server asked to.
        return "keep" if upstream.sock is not None else "close"

    def _send_request(self, upstream: _Upstream, data: bytes) -> _Head:
        """Sends DATA upstream and reads the response head. A kept-alive connection the server has
        closed meanwhile fails on send or gives no response: then once more on a new connection."""
        reused = upstream.reused
        try:
            upstream.send(data)
            response = _read_head(upstream.rfile)
        except OSError:
            if not reused:
                raise
            response = None
        if response is None:
            if not reused:
                raise _ProtocolError("the upstream server closed the connection without answering")
            upstream.close()
            upstream.send(data)
            response = _read_head(upstream.rfile)
            if response is None:
                raise _ProtocolError("the upstream server closed the connection without answering")
        upstream.reused = True
        return response

    @staticmethod
    def _read_final_head(client: socket.socket, upstream: _Upstream,
                         first: Optional[_Head] = None) -> _Head:
        """Relays interim (1xx) responses to the client and returns the final response's head."""
        response = first
        while True:
            if response is not None:
                client.sendall(response.raw)
            response = _read_head(upstream.rfile)
            if response is None:
                raise _ProtocolError("the upstream server closed the connection mid-response")
            if response.status >= 200:
                return response

    @staticmethod
    def _read_response_body(upstream: _Upstream, request: _Head, response: _Head) -> bytes:
        if not _response_has_body(request, response):
            return b""
        if _has_body(response):
            return _read_body(upstream.rfile, response)
        body = upstream.rfile.read()  # delimited by the end of the connection
        upstream.close()
        return body

    @staticmethod
    def _error_response(fault: str, request: _Head, close: bool) -> bytes:
        status, code, message = _ERROR_RESPONSES[fault]
        resource = request.start[1].split("?", 1)[0]
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f"<Error><Code>{code}</Code><Message>{message}</Message>"
                f"<Resource>{resource}</Resource><RequestId>tessera-fault-proxy</RequestId></Error>"
                ).encode()
        head = (f"HTTP/1.1 {status}\r\nContent-Type: application/xml\r\n"
                f"Content-Length: {len(body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n")
        return head.encode() + (b"" if request.start[0] == "HEAD" else body)


def prefix_for(request) -> str:
    """A key prefix of the test's own (its name and this process), so tests never see each other's keys."""
    name = request.node.name.replace("[", "-").replace("]", "").replace("/", "-")
    return f"{name}-{os.getpid()}"
