"""tessera.dask across real hosts (issue 33): network namespaces joined by a bridge (netns_hosts.py),
SeaweedFS on host "s3", a Dask scheduler on "sched", two workers ("w1", "w2": one process, two
threads each) and the client ("client"), every host with a private /tmp and nothing shared but the
installed software. Workers have no AWS_* environment: the client passes storage_options.

Checked, as the issue's acceptance asks:
- convert (S3 -> S3) and to_store with a pyramid write every object byte-identical to one process;
- faults at random moments of a convert job (a worker killed, a worker's link down 5, 20 and 60 s,
  the server's link down 5 and 20 s, the client killed; and, so that a job surely fails, the
  server's link down 40 s under a 5 s retry budget): the job ends exact, or fails with a clear
  error, leaving nothing that opens as an array (tessera, zarr-python), and no object is written
  after the client returned (the bucket listed at return and again later, after a cut-off host is
  back: same keys, ETags and modification times);
- a local-path convert, which the workers cannot share with the client, fails with the shared-
  storage error.

Needs root (ip netns); skipped, saying why, where namespaces cannot be made. The fault moments come
from TESSERA_MULTIHOST_SEED (printed); each scenario's time is printed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from netns_hosts import REPO_ROOT, VENV_BIN, Hosts, base_env, namespaces_not_permitted

SEED = int(os.environ.get("TESSERA_MULTIHOST_SEED", "3301"))
CLIENT_SCRIPT = str(Path(__file__).resolve().with_name("multihost_client.py"))
PYTHON = str(VENV_BIN / "python")
S3_PORT = 8333
SCHEDULER_PORT = 8786
BUCKET = "multihost"
ACCESS_KEY, SECRET_KEY, REGION = "testkey", "testsecret", "us-east-1"  # scripts/s3_server.sh's

# The data: 4 MiB of uint16; a convert job is 1024 tasks, each reading one source chunk and
# writing one shard of 8 chunks, so that it lasts long enough (5-10 s) to be hit at a random moment.
DATA = {"seed": 33, "shape": [32, 256, 256], "dtype": "uint16"}
SOURCE_OPTIONS = {"chunks": [4, 16, 32], "codec": "zstd"}
CONVERT_OPTIONS = {"chunks": [2, 8, 16], "shard_chunks": [2, 2, 2], "codec": "zstd"}
TO_STORE_OPTIONS = {"chunks": [8, 32, 32], "shard_chunks": [1, 2, 2], "codec": "zstd", "pyramid": 2, "ome": True}
TO_STORE_LEVELS = 3  # levels 0..2

# weed binds 127.0.0.1 as scripts/s3_server.sh starts it; on host "s3" it must also answer on the
# host's address, so the script runs this wrapper as its weed, widening only the bind address.
WEED_WRAPPER = f"""#!/bin/bash
args=()
for a in "$@"; do [[ $a == -ip.bind=127.0.0.1 ]] && a=-ip.bind=0.0.0.0; args+=("$a"); done
exec {VENV_BIN}/weed "${{args[@]}}"
"""

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="network namespaces are Linux's")


class Cluster:
    """The five hosts and what runs on them; scenarios run one after another against it."""

    def __init__(self, hosts: Hosts, say):
        self.hosts = hosts
        self.say = say
        self.endpoint = f"http://{hosts.address('s3')}:{S3_PORT}"
        self.scheduler = f"tcp://{hosts.address('sched')}:{SCHEDULER_PORT}"
        self.clean_convert_seconds = None  # measured by the identity test; the fault moments scale with it
        self.reference_objects: dict[str, dict] = {}  # reference prefix -> its listing, with hashes

    # --- starting -----------------------------------------------------------------------------

    def start(self) -> None:
        self.start_s3()
        self.hosts.start("sched", ["dask", "scheduler", "--host", self.hosts.address("sched"),
                                   "--port", str(SCHEDULER_PORT), "--no-dashboard"], base_env(), private=True)
        for worker in ("w1", "w2"):
            self.start_worker(worker)
        self.wait_for_workers(["w1", "w2"], timeout=90)

    def start_s3(self) -> None:
        script = (f'printf "%s" "$WEED_WRAPPER" >/tmp/weed && chmod +x /tmp/weed && '
                  f'WEED=/tmp/weed scripts/s3_server.sh start /tmp/s3 {S3_PORT} && '
                  f'scripts/s3_server.sh bucket {S3_PORT} {BUCKET}')
        proc = self.hosts.run("s3", ["bash", "-c", script], base_env(WEED_WRAPPER=WEED_WRAPPER), private=True)
        assert proc.returncode == 0, f"SeaweedFS did not start on host s3:\n{proc.stdout}\n{proc.stderr}"

    def start_worker(self, name: str) -> None:
        self.hosts.start(name, ["dask", "worker", self.scheduler, "--name", name, "--host", self.hosts.address(name),
                                "--nthreads", "2", "--no-dashboard"], base_env(), private=True)

    def wait_for_workers(self, names, timeout: float) -> list[str]:
        got = self.client("workers", {"names": names, "timeout": timeout}, timeout=timeout + 60)["names"]
        assert set(names) <= set(got), f"workers {names} expected, the scheduler has {got}:\n" + \
            "\n".join(self.hosts.log(n)[-3000:] for n in names)
        for name in names:  # what the job relies on: the store settings come with it, not from here
            for pid in self.hosts.pids(name):
                try:
                    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                except FileNotFoundError:
                    continue
                aws = [v.split(b"=")[0].decode() for v in environ if v.startswith(b"AWS_")]
                assert not aws, f"a process on {name} has {aws} in its environment"
        return got

    def ensure_workers(self) -> None:
        """Both workers connected; a worker host whose worker did not come back is started afresh."""
        got = self.client("workers", {"names": ["w1", "w2"], "timeout": 0}, timeout=90)["names"]
        for name in ("w1", "w2"):
            if name not in got:
                self.say(f"  (restarting {name}: the scheduler has {got})")
                self.hosts.stop_host(name)
                self.start_worker(name)
        self.wait_for_workers(["w1", "w2"], timeout=60)

    # --- the client host ----------------------------------------------------------------------

    def store_args(self) -> dict:
        return {"bucket": BUCKET, "endpoint": self.endpoint, "region": REGION,
                "access_key": ACCESS_KEY, "secret_key": SECRET_KEY, "scheduler": self.scheduler}

    def harness_env(self) -> dict:
        """The client host's environment for the harness's own steps (not the code under test)."""
        return base_env(AWS_ENDPOINT_URL=self.endpoint, AWS_ACCESS_KEY_ID=ACCESS_KEY,
                        AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_REGION=REGION,
                        AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null")

    def client_argv(self, command: str, args: dict) -> list[str]:
        return self.hosts.command("client", [PYTHON, CLIENT_SCRIPT, command, json.dumps({**self.store_args(), **args})],
                                  private=True)

    def client(self, command: str, args: dict, timeout: float = 120) -> dict:
        """Runs a harness step on the client host; its RESULT."""
        proc = subprocess.run(self.client_argv(command, args), env=self.harness_env(), capture_output=True,
                              text=True, timeout=timeout, cwd=REPO_ROOT)
        return parse_result(proc.stdout, f"client {command} (exit {proc.returncode}):\n{proc.stderr[-4000:]}")

    def storage_options(self) -> dict:
        """The store settings the client passes to the job (and through it to the workers)."""
        return {"endpoint_url": self.endpoint, "region": REGION, "access_key_id": ACCESS_KEY,
                "secret_access_key": SECRET_KEY}

    def start_job(self, args: dict) -> subprocess.Popen:
        """Starts a tessera.dask job on the client host with no AWS_* environment."""
        args = {"storage_options": self.storage_options(), **args}
        return subprocess.Popen(self.client_argv("job", args), env=base_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)

    def list(self, prefix: str, hashes: bool = False) -> dict:
        return self.client("list", {"prefix": prefix, "hashes": hashes})["objects"]

    def probe(self, location: str, levels: int = 1) -> list[str]:
        return self.client("probe", {"location": location, "levels": levels})["opened"]


def parse_result(stdout: str, context: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"no RESULT from {context}\nstdout: {stdout[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def url(prefix: str) -> str:
    return f"s3://{BUCKET}/{prefix}"


@pytest.fixture(scope="module")
def say(pytestconfig):
    """Prints a line to the terminal even while pytest captures output (scenario times, the seed)."""
    reporter = pytestconfig.pluginmanager.getplugin("terminalreporter")
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None:
        return print

    def line(text):
        with capture.global_and_fixture_disabled():
            reporter.write_line(text)
    return line


@pytest.fixture(scope="module")
def cluster(say):
    reason = namespaces_not_permitted()
    if reason:
        pytest.skip(reason)
    began = time.monotonic()
    with Hosts(["s3", "sched", "w1", "w2", "client"]) as hosts:
        c = Cluster(hosts, say)
        try:
            c.start()
            c.client("prepare", {"data": DATA, "source": "source.zarr", "source_options": SOURCE_OPTIONS,
                                 "convert_reference": "reference/convert/out.zarr",
                                 "convert_options": CONVERT_OPTIONS,
                                 "to_store_reference": "reference/to_store/out.zarr",
                                 "to_store_options": TO_STORE_OPTIONS}, timeout=180)
            say(f"\nmultihost: cluster and references ready in {time.monotonic() - began:.1f} s "
                f"(fault seed TESSERA_MULTIHOST_SEED={SEED}; logs in {hosts.log_dir})")
            yield c
        except BaseException:
            for name in ("s3", "sched", "w1", "w2"):
                say(f"--- {name} log (end) ---\n{hosts.log(name)[-2000:]}")
            raise


# --- the checks ---------------------------------------------------------------------------------

def assert_same_objects(cluster: Cluster, prefix: str, reference: str, listing: dict | None = None) -> None:
    """Every object under PREFIX is byte-identical to the one under REFERENCE, and none is missing
    or extra. (Both end in out.zarr: the OME group's name is the last part of its location.)
    Compared by the SHA-256 of their bytes; given LISTING (PREFIX's, without hashes), by size and
    ETag instead, which for an object PUT whole is the MD5 of its bytes (saves reading them)."""
    if reference not in cluster.reference_objects:  # written once, by prepare
        cluster.reference_objects[reference] = cluster.list(reference, hashes=True)
    ref = cluster.reference_objects[reference]
    if listing is None:
        got = {k: v[3] for k, v in cluster.list(prefix, hashes=True).items()}
        want = {k: v[3] for k, v in ref.items()}
    else:
        got = {k: (v[0], v[1]) for k, v in listing.items()}
        want = {k: (v[0], v[1]) for k, v in ref.items()}
    assert want, f"the reference {reference} is empty"
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    differ = sorted(k for k in set(want) & set(got) if want[k] != got[k])
    shown = ""
    for key in [k for k in differ if k.endswith(".json") or k.endswith("info")][:1]:  # metadata: show it
        shown = "".join(f"\n{p}/{key}:\n{cluster.client('get', {'key': f'{p}/{key}'})['text']}"
                        for p in (prefix, reference))
    assert not (missing or extra or differ), (
        f"{prefix} differs from one process's {reference}: {len(missing)} missing {missing[:5]}, "
        f"{len(extra)} extra {extra[:5]}, {len(differ)} differ {differ[:5]}{shown}")


def assert_nothing_written_after(cluster: Cluster, prefix: str, before: dict, what: str) -> dict:
    """PREFIX lists as BEFORE did (keys, sizes, ETags, modification times); returns the listing."""
    after = cluster.list(prefix)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, (f"{len(changed)} objects under {prefix} appeared or changed after {what}: "
                         f"{[(k, before.get(k), after.get(k)) for k in changed[:5]]}")
    return after


def run_job(cluster: Cluster, args: dict, fault=None, timeout: float = 240) -> tuple[dict, dict]:
    """Runs a job on the client host; FAULT(proc, began, record) runs in a thread once the job began.
    Returns the job's RESULT (None when the client was killed) and what the fault recorded. A worker
    that an earlier scenario cut off for good is started again first."""
    for attempt in range(2):
        result, record = run_job_once(cluster, args, fault, timeout)
        if result is None or "cluster_not_ready" not in result:
            return result, record
        cluster.say(f"  (the scheduler has workers {result['cluster_not_ready']}: restarting the others)")
        cluster.ensure_workers()
    raise AssertionError(f"the workers did not come back: {result['cluster_not_ready']}")


def run_job_once(cluster: Cluster, args: dict, fault, timeout: float) -> tuple[dict, dict]:
    proc = cluster.start_job(args)
    record = {}
    thread = None
    try:
        line = proc.stdout.readline()
        while line and not line.startswith(("START", "RESULT")):
            line = proc.stdout.readline()
        assert line, f"the job ended before it began:\n{proc.stderr.read()[-4000:]}"
        if line.startswith("RESULT"):  # the cluster was not ready
            proc.communicate(timeout=60)
            return parse_result(line, "job"), {}
        began = time.monotonic()
        if fault:
            thread = threading.Thread(target=fault, args=(proc, began, record), daemon=True)
            thread.start()
        out, err = proc.communicate(timeout=timeout)
        record["returned"] = time.monotonic()
        if thread:
            thread.join(timeout=120)
            assert not thread.is_alive(), "the fault did not end"
        if proc.returncode == -signal.SIGKILL:
            return None, record
        return parse_result(line + out, f"job (exit {proc.returncode}):\n{err[-4000:]}"), record
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if thread is not None:  # a link the fault took down is up again before anything else runs
            thread.join(timeout=120)


# --- the scenarios ------------------------------------------------------------------------------

def convert_job(prefix: str) -> dict:
    return {"kind": "convert", "src": url("source.zarr"), "dst": url(prefix), "options": CONVERT_OPTIONS,
            "list_prefix": prefix}


def test_convert_is_byte_identical_to_one_process(cluster, say):
    began = time.monotonic()
    result, _ = run_job(cluster, convert_job("convert/out.zarr"))
    assert result["ok"], f"convert failed: {result['error']}\n{result['traceback']}"
    cluster.clean_convert_seconds = result["seconds"]
    assert_same_objects(cluster, "convert/out.zarr", "reference/convert/out.zarr")
    assert_nothing_written_after(cluster, "convert/out.zarr", result["at_return"], "the client returned")
    say(f"multihost: convert byte-identical (job {result['seconds']:.1f} s, scenario {time.monotonic() - began:.1f} s)")


def test_to_store_pyramid_is_byte_identical_to_one_process(cluster, say):
    began = time.monotonic()
    result, _ = run_job(cluster, {"kind": "to_store", "data": DATA, "dask_chunks": [16, 128, 128],
                                  "dst": url("to_store/out.zarr"), "options": TO_STORE_OPTIONS,
                                  "list_prefix": "to_store/out.zarr"})
    assert result["ok"], f"to_store failed: {result['error']}\n{result['traceback']}"
    assert_same_objects(cluster, "to_store/out.zarr", "reference/to_store/out.zarr")
    assert_nothing_written_after(cluster, "to_store/out.zarr", result["at_return"], "the client returned")
    say(f"multihost: to_store pyramid byte-identical (job {result['seconds']:.1f} s, "
        f"scenario {time.monotonic() - began:.1f} s)")


def worker_pid(cluster: Cluster, host: str) -> int:
    """The worker process on HOST (the nanny's child that runs the tasks)."""
    for pid in cluster.hosts.pids(host):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if b"spawn_main" in cmdline or b"forkserver" in cmdline:
            return pid
    raise AssertionError(f"no worker process on {host}: {cluster.hosts.pids(host)}")


def kill_worker(cluster, proc, record):
    pid = worker_pid(cluster, "w1")
    os.kill(pid, signal.SIGKILL)
    record["fault"] = f"killed w1's worker (pid {pid})"


def link_down(host: str, seconds: float):
    def fault(cluster, proc, record):
        cluster.hosts.link_down(host)
        try:
            time.sleep(seconds)
        finally:
            cluster.hosts.link_up(host)
        record["fault"] = f"{host}'s link down {seconds:g} s"
    return fault


def kill_client(cluster, proc, record):
    proc.send_signal(signal.SIGKILL)  # Popen's: nothing if the job has already been reaped
    record["fault"] = f"killed the client (pid {proc.pid})"


FAULTS = {
    "worker_killed": kill_worker,
    "worker_link_down_5s": link_down("w1", 5),
    "worker_link_down_20s": link_down("w1", 20),
    "worker_link_down_60s": link_down("w1", 60),
    "s3_link_down_5s": link_down("s3", 5),
    "s3_link_down_20s": link_down("s3", 20),
    # An outage longer than a stalled transfer lasts (30 s below 1 KiB/s) plus the job's retry
    # budget, with no Dask task retries: the job fails, and must fail cleanly. (A shorter outage is
    # absorbed: a transfer in flight just waits for the link, whatever the budget.)
    "s3_link_down_40s_retry_budget_5s": link_down("s3", 40),
    "client_killed": kill_client,
}
# Scenarios whose job gets a short retry budget (storage option retry_timeout, seconds) and no
# Dask task retries.
RETRY_BUDGETS = {"s3_link_down_40s_retry_budget_5s": 5}


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_during_convert_ends_exact_or_leaves_no_array(cluster, say, name):
    began = time.monotonic()
    rng = random.Random(f"{SEED}-{name}")
    moment = rng.uniform(0.15, 0.6) * (cluster.clean_convert_seconds or 10.0)
    prefix = f"faults/{name}/out.zarr"

    def fault(proc, job_began, record):
        time.sleep(max(0.0, job_began + moment - time.monotonic()))
        record["at"] = time.monotonic() - job_began
        if proc.poll() is not None:
            record["fault"] = "none (the job had ended)"
            return
        FAULTS[name](cluster, proc, record)
        record["ended"] = time.monotonic()

    args = convert_job(prefix)
    if name in RETRY_BUDGETS:
        args["storage_options"] = {**cluster.storage_options(), "retry_timeout": RETRY_BUDGETS[name]}
        args["options"] = {**args["options"], "retries": 0}
    result, record = run_job(cluster, args, fault)
    if result is None:  # the client was killed: give running tasks time to finish or stop
        time.sleep(8)
        at_return = cluster.list(prefix)
        outcome = "client killed"
    else:
        at_return = result["at_return"]
        outcome = "exact" if result["ok"] else f"failed: {result['error'][:300]}"
    # Nothing may change after the return, also once a cut-off host is back (and a request's retry,
    # at most 4 s of backoff away, had its chance).
    time.sleep(max(3.0, record.get("ended", 0) + 8 - time.monotonic()))
    after = assert_nothing_written_after(cluster, prefix, at_return,
                                         "the client was killed" if result is None else "the client returned")
    if result is not None and result["ok"]:
        assert_same_objects(cluster, prefix, "reference/convert/out.zarr", listing=after)
    else:
        if result is not None:
            assert_clear_error(result["error"], url(prefix))
        opened = cluster.probe(url(prefix))
        assert not opened, f"after the failed job ({outcome}), these open: {opened}"
    job = f", job {result['seconds']:.1f} s" if result else ""
    say(f"multihost: {name}: {record.get('fault')} at +{record.get('at', 0):.1f} s -> {outcome}{job} "
        f"(scenario {time.monotonic() - began:.1f} s)")


def assert_clear_error(error: str, location: str) -> None:
    """A failed job's error says what failed: a tessera error, or one that names the job's location;
    not a Python error from inside the machinery (a TypeError, a KeyError) or an empty message."""
    kind, _, message = error.partition(": ")
    assert message.strip() and (kind.startswith("tessera.") or location in message), \
        f"the failed job's error is not clear (neither a tessera error nor naming {location}): {error}"


def test_local_path_convert_without_shared_storage_fails(cluster, say):
    began = time.monotonic()
    result, _ = run_job(cluster, {"kind": "convert", "src": url("source.zarr"), "dst": "/tmp/local/out.zarr",
                                  "options": CONVERT_OPTIONS, "probe": {"location": "/tmp/local/out.zarr"}})
    assert not result["ok"], "a local-path convert on workers that do not share the client's /tmp succeeded"
    assert "shared" in result["error"], f"not the shared-storage error: {result['error']}"
    assert not result["probe"]["opened"], f"after the failed job, these open: {result['probe']['opened']}"
    say(f"multihost: local path: {result['error'][:200]} (scenario {time.monotonic() - began:.1f} s)")
