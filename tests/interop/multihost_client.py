"""The client host's side of the multi-host test (test_multihost.py): run as a script on host
"client", one command per run, its arguments one JSON object in argv[2], its answer one JSON line
"RESULT {...}" on stdout (after any "START <unix time>" line that marks when a job began).

    python multihost_client.py COMMAND '{"bucket": ..., ...}'

Commands:
  prepare  the convert source in S3, and the single-process references of both jobs
  job      a tessera.dask job on the cluster (the code under test); lists the bucket the moment
           the job returned, so the caller can compare with a later listing
  get      one object's bytes, as text (for a failure's message)
  list     every object under a prefix: size, ETag, last-modified and SHA-256 of its bytes
  workers  the names of the workers the scheduler has (waiting a while for the expected ones)
  probe    what under a location still opens as an array or group (tessera, zarr-python)

Objects are listed and read with obstore, given the server's address and keys explicitly. The job
itself gets the store settings only through storage_options (its environment has no AWS_*).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def data_for(spec: dict) -> np.ndarray:
    """The array a job writes, the same in every process: random low bits over a ramp, so that
    the codec has something to do and every shard differs."""
    rng = np.random.default_rng(spec["seed"])
    shape = tuple(spec["shape"])
    ramp = np.arange(shape[-1], dtype=np.uint16) * 7
    return (rng.integers(0, 512, size=shape, dtype=np.uint16) + ramp).astype(spec["dtype"])


def s3_store(a: dict, prefix: str = ""):
    import obstore.store

    return obstore.store.S3Store(
        a["bucket"], prefix=prefix or None, endpoint=a["endpoint"], region=a["region"],
        access_key_id=a["access_key"], secret_access_key=a["secret_key"],
        virtual_hosted_style_request=False, client_options={"allow_http": True})


def list_objects(a: dict, prefix: str, hashes: bool = True) -> dict[str, list]:
    """{key relative to PREFIX: [size, etag, last_modified, sha256 or None]} of every object."""
    import obstore

    store = s3_store(a, prefix)
    metas = [meta for batch in obstore.list(store) for meta in batch]

    def digest(path):
        return hashlib.sha256(obstore.get(store, path).bytes()).hexdigest() if hashes else None

    with ThreadPoolExecutor(16) as pool:  # thousands of small objects
        digests = list(pool.map(digest, [meta["path"] for meta in metas]))
    return {meta["path"]: [meta["size"], meta.get("e_tag"), str(meta["last_modified"]), d]
            for meta, d in zip(metas, digests)}


def url(a: dict, prefix: str) -> str:
    return f"s3://{a['bucket']}/{prefix}"


def prepare(a: dict) -> dict:
    """The convert source and both references, written by one process (settings from the
    environment: this is the harness, not the code under test)."""
    import tessera

    source = data_for(a["data"])
    with tessera.create(url(a, a["source"]), dtype=source.dtype, shape=source.shape, **a["source_options"]) as w:
        w.append(source)
    tessera.convert(url(a, a["source"]), url(a, a["convert_reference"]), **a["convert_options"])
    with tessera.create(url(a, a["to_store_reference"]), dtype=source.dtype, shape=source.shape,
                        **a["to_store_options"]) as w:
        w.append(source)
    return {"ok": True}


def job(a: dict) -> dict:
    """Runs a tessera.dask job on the cluster. Prints START when the workers are there and the job
    begins; returns whether it succeeded (or the error), its time, and the bucket at its return."""
    import dask.array as da
    import distributed

    import tessera.dask

    client = distributed.Client(a["scheduler"], timeout="30s")
    try:
        client.wait_for_workers(a.get("workers", 2), timeout=a.get("wait_for_workers", 5))
    except TimeoutError:  # the harness restarts the missing worker and runs the job again
        names = sorted(str(w["name"]) for w in client.scheduler_info()["workers"].values())
        client.close(timeout=10)
        return {"ok": False, "cluster_not_ready": names}
    print(f"START {time.time()}", flush=True)
    began = time.monotonic()
    result = {"ok": True}
    try:
        if a["kind"] == "convert":
            tessera.dask.convert(a["src"], a["dst"], **a["options"], storage_options=a["storage_options"],
                                 source_storage_options=a["storage_options"])
        elif a["kind"] == "to_store":
            darr = da.from_array(data_for(a["data"]), chunks=tuple(a["dask_chunks"]))
            tessera.dask.to_store(darr, a["dst"], **a["options"], storage_options=a["storage_options"])
        else:
            raise ValueError(f"unknown job kind {a['kind']!r}")
    except Exception as e:  # the job's failure is the answer, not this script's
        result = {"ok": False, "error": f"{type(e).__module__}.{type(e).__name__}: {e}",
                  "traceback": traceback.format_exc(limit=8)}
    result["seconds"] = time.monotonic() - began
    if a.get("list_prefix") is not None:
        result["at_return"] = list_objects(a, a["list_prefix"], hashes=False)
    if a.get("probe") is not None:  # a local location lives in this process's private /tmp
        result["probe"] = probe({**a, **a["probe"]})
    client.close(timeout=10)
    return result


def workers(a: dict) -> dict:
    """The names of the workers connected to the scheduler, once all of A["names"] are (or after
    A["timeout"] seconds)."""
    import distributed

    client = distributed.Client(a["scheduler"], timeout="30s")
    deadline = time.monotonic() + a["timeout"]
    while True:
        names = sorted(str(w["name"]) for w in client.scheduler_info()["workers"].values())
        if set(a["names"]) <= set(names) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    client.close(timeout=10)
    return {"names": names}


def probe(a: dict) -> dict:
    """Which of LOCATION's candidate arrays and groups open, in tessera and in zarr-python."""
    import tessera
    import zarr
    import zarr.storage

    location = a["location"]
    opened = []
    for level in [None, *range(a.get("levels", 1))]:
        try:
            array = tessera.open(location, **({} if level is None else {"level": level}))
            opened.append(f"tessera.open(level={level}): shape {list(array.shape)}")
        except Exception:
            pass
    if location.startswith("s3://"):
        prefix = location.split("/", 3)[3]
        stores = {"": zarr.storage.ObjectStore(s3_store(a, prefix), read_only=True)}
        for level in range(a.get("levels", 1)):
            stores[f"/{level}"] = zarr.storage.ObjectStore(s3_store(a, f"{prefix}/{level}"), read_only=True)
    else:
        stores = {"": location, **{f"/{level}": f"{location}/{level}" for level in range(a.get("levels", 1))}}
    for suffix, store in stores.items():
        for kind, opener in (("array", zarr.open_array), ("group", zarr.open_group)):
            try:
                opener(store=store, mode="r")
                opened.append(f"zarr.open_{kind}({location}{suffix})")
            except Exception:
                pass
    return {"opened": opened}


def main() -> None:
    command, a = sys.argv[1], json.loads(sys.argv[2])
    if command == "prepare":
        result = prepare(a)
    elif command == "job":
        result = job(a)
    elif command == "list":
        result = {"objects": list_objects(a, a["prefix"], hashes=a.get("hashes", True))}
    elif command == "get":
        import obstore
        result = {"text": bytes(obstore.get(s3_store(a), a["key"]).bytes()).decode(errors="replace")}
    elif command == "workers":
        result = workers(a)
    elif command == "probe":
        result = probe(a)
    else:
        raise SystemExit(f"unknown command {command!r}")
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
