"""Hosts for a multi-host test on one machine: Linux network namespaces joined by a bridge.

Each host is a network namespace named PREFIX-<host> with one interface, eth0, at SUBNET.<n>/24; the
other ends of those links are ports of a bridge in a namespace of its own (PREFIX-switch), so the
test gives no address to, and routes nothing through, the machine's own namespace. Removing the
namespaces (after killing every process in them) removes every link and the bridge with them.

A host's processes may get a private /tmp (a tmpfs in a mount namespace of their own), so that two
hosts share no scratch location; they then share only what a real cluster's machines share: the
installed software (the repository and its venv).

Needs root (ip netns). Plain Python with no pytest dependency.

    with Hosts(["s3", "sched", "w1"]) as hosts:
        hosts.start("sched", ["dask", "scheduler", "--host", hosts.address("sched")], env={...})
        hosts.link_down("w1"); ...; hosts.link_up("w1")
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Mapping, Optional, Sequence

PREFIX = "tessmh"  # every namespace of this harness; a crashed run's leftovers are found by it
SUBNET = "10.213.0"  # test-only addresses, never used outside the namespaces
SWITCH = "switch"  # the namespace holding the bridge
BRIDGE = "br0"
LOCK_FILE = "/tmp/tessera-multihost.lock"
LOG_DIR_PREFIX = "tessera-multihost-logs-"

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = REPO_ROOT / ".venv" / "bin"


def namespace(host: str) -> str:
    return f"{PREFIX}-{host}"


def _ip(*args: str) -> str:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def namespaces_not_permitted() -> Optional[str]:
    """None when this process may create network namespaces and private /tmp mounts, else why not
    (for a skip)."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    for tool, package in (("ip", "iproute2"), ("unshare", "util-linux")):
        if shutil.which(tool) is None:
            return f"no {tool} command (Debian package {package})"
    probe = namespace("probe")
    proc = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if proc.returncode != 0 and "File exists" not in proc.stderr:
        return f"ip netns add is not permitted here: {proc.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    proc = subprocess.run(private_tmp(["true"]), capture_output=True, text=True)
    if proc.returncode != 0:
        return f"a private /tmp (unshare --mount, mount -t tmpfs) is not permitted here: {proc.stderr.strip()}"
    return None


def namespace_pids(ns: str) -> list[int]:
    """The processes in network namespace NS (all of them started by this harness)."""
    proc = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return [int(p) for p in proc.stdout.split()] if proc.returncode == 0 else []


def _alive(pid: int) -> bool:
    """Whether PID runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def kill_pids(pids: Sequence[int], timeout_s: float = 10.0) -> None:
    """SIGKILL each of PIDS and wait (up to TIMEOUT_S) until none runs."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout_s
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)


def remove_namespace(ns: str) -> None:
    """Kills every process in NS, then deletes it (and with it its links)."""
    for _ in range(3):  # a process may fork while the first ones die
        pids = namespace_pids(ns)
        if not pids:
            break
        kill_pids(pids)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def remove_leftovers() -> list[str]:
    """Removes every namespace of this harness (a crashed earlier run's); returns their names."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    names = [line.split()[0] for line in listed.splitlines()
             if line.strip() and line.split()[0].startswith(PREFIX + "-")]
    for ns in names:
        remove_namespace(ns)
    return names


# The installed software every host shares: the repository (its venv, scripts and build).
_REPOSITORY = Path(__file__).resolve().parents[2]

# Mounts a fresh tmpfs on /tmp; $1, when not empty, is a directory under /tmp that stays visible
# (bound aside first, then moved back onto the same path inside the fresh /tmp).
_PRIVATE_TMP = """
keep=$1; shift
if [ -n "$keep" ]; then
  aside=/run/tessmh-keep; mkdir -p "$aside" && mount --bind "$keep" "$aside" || exit 1
fi
mount -t tmpfs tmpfs /tmp || exit 1
if [ -n "$keep" ]; then mkdir -p "$keep" && mount --move "$aside" "$keep" || exit 1; fi
exec "$@"
"""


def private_tmp(cmd: Sequence[str]) -> list[str]:
    """CMD run in a mount namespace of its own with a fresh tmpfs on /tmp (and nothing else changed;
    a checkout that itself lives under /tmp, as a CI clone may, stays visible)."""
    keep = str(_REPOSITORY) if _REPOSITORY.is_relative_to("/tmp") else ""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _PRIVATE_TMP, "sh", keep, *cmd]


def base_env(**extra: str) -> dict[str, str]:
    """A minimal environment for a host's process: no AWS_* (nor anything else of ours) unless
    EXTRA adds it; HOME is /tmp, so no profile files of the machine's user are found either."""
    env = {"PATH": f"{VENV_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
    env.update(extra)
    return env


class Hosts:
    """Network namespaces PREFIX-<host> for HOSTS, each with eth0 at SUBNET.<2 + its index> on one
    bridge. A context manager: leftovers of an earlier run are removed and the hosts made on enter;
    on exit (also after a failure) every process started in them is killed and they are removed."""

    def __init__(self, hosts: Sequence[str]):
        self.hosts = list(hosts)
        self._addresses = {h: f"{SUBNET}.{i + 2}" for i, h in enumerate(self.hosts)}
        self.log_dir: Optional[Path] = None  # made on enter
        self._procs: dict[str, list[subprocess.Popen]] = {h: [] for h in self.hosts}
        self._logs: list = []
        self._lock = None

    def address(self, host: str) -> str:
        return self._addresses[host]

    def __enter__(self) -> Hosts:
        # One run at a time on a machine: the next waits here, so that removing leftovers never
        # removes a running test's hosts.
        self._lock = open(LOCK_FILE, "w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        remove_leftovers()
        # The logs of the last run stay until the next (for a failure's diagnosis); older ones go.
        for old in Path(tempfile.gettempdir()).glob(LOG_DIR_PREFIX + "*"):
            shutil.rmtree(old, ignore_errors=True)
        self.log_dir = Path(tempfile.mkdtemp(prefix=LOG_DIR_PREFIX))
        try:
            self._make()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()

    def _make(self) -> None:
        switch = namespace(SWITCH)
        _ip("netns", "add", switch)
        _ip("-n", switch, "link", "add", BRIDGE, "type", "bridge")
        _ip("-n", switch, "link", "set", BRIDGE, "up")
        for host in self.hosts:
            ns = namespace(host)
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            # eth0 in the host, its peer (named after the host) a port of the bridge.
            _ip("link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", host, "netns", switch)
            _ip("-n", switch, "link", "set", host, "master", BRIDGE)
            _ip("-n", switch, "link", "set", host, "up")
            _ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")

    def remove(self) -> None:
        """Kills every process in the hosts and removes the namespaces; safe to call twice."""
        for host in self.hosts + [SWITCH]:
            remove_namespace(namespace(host))
        for procs in self._procs.values():
            for proc in procs:
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        for log in self._logs:
            log.close()
        self._logs.clear()
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None

    # --- processes ----------------------------------------------------------------------------

    def command(self, host: str, cmd: Sequence[str], private: bool = False) -> list[str]:
        """The argv that runs CMD on HOST (with a private /tmp when PRIVATE)."""
        return ["ip", "netns", "exec", namespace(host), *(private_tmp(cmd) if private else cmd)]

    def start(self, host: str, cmd: Sequence[str], env: Mapping[str, str], private: bool = False,
              log_name: Optional[str] = None) -> subprocess.Popen:
        """Starts CMD on HOST in the background, its output in log_dir/<log_name or host>.log."""
        log = open(self.log_dir / f"{log_name or host}.log", "ab")
        self._logs.append(log)
        proc = subprocess.Popen(self.command(host, cmd, private), env=dict(env), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT)
        self._procs[host].append(proc)
        return proc

    def run(self, host: str, cmd: Sequence[str], env: Mapping[str, str], private: bool = False,
            timeout: float = 120.0) -> subprocess.CompletedProcess:
        """Runs CMD on HOST to its end; returns its exit code and output (text)."""
        return subprocess.run(self.command(host, cmd, private), env=dict(env), capture_output=True, text=True,
                              cwd=REPO_ROOT, timeout=timeout)

    def stop_host(self, host: str) -> None:
        """Kills every process on HOST (the host stays, with its address)."""
        for _ in range(3):
            pids = namespace_pids(namespace(host))
            if not pids:
                break
            kill_pids(pids)
        for proc in self._procs[host]:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._procs[host].clear()

    def pids(self, host: str) -> list[int]:
        return namespace_pids(namespace(host))

    def log(self, name: str) -> str:
        path = self.log_dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # --- faults -------------------------------------------------------------------------------

    def link_down(self, host: str) -> None:
        """Takes HOST's eth0 down: its address's route goes with it, so its connections fail at once
        and nothing reaches it."""
        _ip("-n", namespace(host), "link", "set", "eth0", "down")

    def link_up(self, host: str) -> None:
        _ip("-n", namespace(host), "link", "set", "eth0", "up")
