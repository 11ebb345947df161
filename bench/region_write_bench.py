#!/usr/bin/env python3
"""Region writes into an existing sharded Zarr v3 array: tessera vs tensorstore vs zarr-python 3.

The array is SIZE^3 uint16 (512^3 by default), shards of 128^3 holding 32^3 inner chunks, bytes +
zstd level 1 inside, crc32c on the index (the layout of bench/zarr_bench.py), filled once with a
smooth gradient plus noise. Each measurement starts from a fresh copy of that store (copied before
the clock starts) and writes BLOCKS blocks of 64^3 random-ish uint16 values at seeded positions:

  non-aligned: block origins anywhere (every touched chunk partly covered: read, merge, re-encode)
  aligned:     block origins on multiples of the inner chunk (32): every touched chunk is replaced
               whole, but its shard still holds other chunks, so each shard is still read and rewritten

Writers, each in a fresh child process (peak RSS is that child's), timed from inside from open to the
last write done:
  tessera        tessera.open(store, mode="r+"); a[block] = values, one call per block
  tessera-txn    the same as t[block] = values inside `with a.transaction() as t:` (each shard read
                 and written once at commit)
  tensorstore    ts.open(...); t[block].write(values).result(), one per block
  tensorstore-txn the same in one ts.Transaction, committed at the end
  zarr-python    zarr.open_array(store, mode="r+"); z[block] = values

After every run the store is read back with tensorstore and compared with the expected array
(initial values with the blocks applied in order); a mismatch fails the benchmark. The table shows
the median of --repeats runs (tools interleaved in each repeat) and each tessera row's ratio against
the fastest peer row of the same alignment (time: peer / tessera, > 1 means tessera is faster):
tessera's one call per block against the peers' one call per block, tessera-txn against every peer.

Run from the repository root:  .venv/bin/python bench/region_write_bench.py [--size 512] [--repeats 3]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import child_or_parser, fs_type, run_json_child  # noqa: E402

SHARD = 128
CHUNK = 32
BLOCK = 64
ZSTD_LEVEL = 1
DTYPE = "uint16"
TOOLS = ["tessera", "tessera-txn", "tensorstore", "tensorstore-txn", "zarr-python"]
PEERS = ["tensorstore", "tensorstore-txn", "zarr-python"]
# What each tessera row is compared with: one call per block against the peers' one call per block;
# a transaction against every peer (the fastest is tensorstore's transaction).
COMPARED_WITH = {"tessera": ["tensorstore", "zarr-python"], "tessera-txn": PEERS}


def codecs_json() -> list:
    return [{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [CHUNK] * 3,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end",
        },
    }]


def initial_array(size: int):
    import numpy as np

    rng = np.random.default_rng(1)
    z = np.arange(size, dtype=np.float32)[:, None, None]
    y = np.arange(size, dtype=np.float32)[None, :, None]
    x = np.arange(size, dtype=np.float32)[None, None, :]
    a = 1000 + 3 * z + 2 * y + x + rng.standard_normal((size, size, size), dtype=np.float32) * 4
    return a.astype("<u2")


def blocks(size: int, count: int, aligned: bool):
    """The seeded block origins and values: [(origin tuple, uint16 array of BLOCK^3)]."""
    import numpy as np

    rng = np.random.default_rng(7 if aligned else 11)
    out = []
    for _ in range(count):
        if aligned:
            origin = tuple(int(v) * CHUNK for v in rng.integers(0, (size - BLOCK) // CHUNK + 1, size=3))
        else:
            origin = tuple(int(v) for v in rng.integers(0, size - BLOCK + 1, size=3))
        values = (rng.integers(0, 64, size=(BLOCK,) * 3, dtype=np.uint16) + np.uint16(20000)).astype("<u2")
        out.append((origin, values))
    return out


def make_initial_store(path: Path, size: int) -> None:
    import tensorstore as ts

    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}, "create": True, "delete_existing": True,
            "metadata": {"shape": [size] * 3, "data_type": DTYPE, "fill_value": 0,
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [SHARD] * 3}},
                         "codecs": codecs_json()}}
    ts.open(spec).result().write(initial_array(size)).result()


def expected_array(size: int, count: int, aligned: bool):
    a = initial_array(size)
    for origin, values in blocks(size, count, aligned):
        a[tuple(slice(o, o + BLOCK) for o in origin)] = values
    return a


# ---------------------------------------------------------------------------------------------
# Child: one tool's writes, timed from inside.


def child_main(cfg: dict) -> None:
    tool, store, size, count, aligned = cfg["tool"], cfg["store"], cfg["size"], cfg["count"], cfg["aligned"]
    work = blocks(size, count, aligned)  # generated before the clock starts
    sel = [tuple(slice(o, o + BLOCK) for o in origin) for origin, _ in work]
    if tool.startswith("tensorstore"):
        import tensorstore as ts

        t0 = time.perf_counter()
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": store}, "open": True}).result()
        if tool == "tensorstore-txn":
            with ts.Transaction() as txn:
                tt = t.with_transaction(txn)
                # Each write staged before the next is issued: writes issued together may land in
                # any order where blocks overlap.
                for s, (_, v) in zip(sel, work):
                    tt[s].write(v).result()
        else:
            for s, (_, v) in zip(sel, work):
                t[s].write(v).result()
    elif tool == "zarr-python":
        import zarr

        t0 = time.perf_counter()
        z = zarr.open_array(store, mode="r+")
        for s, (_, v) in zip(sel, work):
            z[s] = v
    elif tool.startswith("tessera"):
        import tessera

        t0 = time.perf_counter()
        a = tessera.open(store, mode="r+")
        if tool == "tessera-txn":
            with a.transaction() as t:
                for s, (_, v) in zip(sel, work):
                    t[s] = v
        else:
            for s, (_, v) in zip(sel, work):
                a[s] = v
    else:
        raise SystemExit(f"unknown tool {tool}")
    print(json.dumps({"seconds": time.perf_counter() - t0}))


# ---------------------------------------------------------------------------------------------
# Parent.


def verify(store: Path, expected) -> None:
    import numpy as np
    import tensorstore as ts

    got = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store)}, "open": True}).result().read().result()
    if not np.array_equal(got, expected):
        bad = np.argwhere(got != expected)
        raise SystemExit(f"{store}: {len(bad)} elements differ from the expected array, first at {tuple(bad[0])}")


def main() -> None:
    ap = child_or_parser(child_main, __doc__)
    if ap is None:
        return
    ap.add_argument("--size", type=int, default=512, help="edge of the cubic array (default 512)")
    ap.add_argument("--blocks", type=int, default=256, help="blocks written per run (default 256)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per measurement; the median is shown")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of " + ",".join(TOOLS))
    ap.add_argument("--workdir", type=Path, default=None, help="where stores go (default: a temp dir)")
    args = ap.parse_args()
    tools = args.tools.split(",")
    work = Path(tempfile.mkdtemp(prefix="region-bench-", dir=args.workdir))
    try:
        initial = work / "initial.zarr"
        make_initial_store(initial, args.size)
        expected = {al: expected_array(args.size, args.blocks, al) for al in (False, True)}
        runs: dict = {}
        for rep in range(args.repeats):
            for aligned in (False, True):
                for tool in tools:
                    store = work / f"{tool}.zarr"
                    shutil.rmtree(store, ignore_errors=True)
                    shutil.copytree(initial, store)
                    cfg = {"tool": tool, "store": str(store), "size": args.size, "count": args.blocks, "aligned": aligned}
                    result, rss = run_json_child(__file__, cfg)
                    if rep == 0:
                        verify(store, expected[aligned])
                    runs.setdefault((tool, aligned), []).append((result["seconds"], rss))
                    print(f"  run {rep + 1}: {tool:16s} {'aligned' if aligned else 'non-aligned':11s} "
                          f"{result['seconds']:.3f} s {rss:.0f} MiB", file=sys.stderr)
        block_mb = args.blocks * BLOCK ** 3 * 2 / 1e6
        print(f"\n{args.blocks} blocks of {BLOCK}^3 {DTYPE} ({block_mb:.0f} MB) into a {args.size}^3 array, shards "
              f"{SHARD}^3 of {CHUNK}^3 chunks, zstd {ZSTD_LEVEL}; {fs_type(work)}; {os.cpu_count()} cores; "
              f"median of {args.repeats}; every run's result verified once against the expected array\n")
        print("| blocks | writer | seconds | MB/s | peak RSS MiB | speed vs fastest compared peer | RSS vs that peer |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for aligned in (False, True):
            med = {t: (statistics.median(s for s, _ in runs[(t, aligned)]), statistics.median(r for _, r in runs[(t, aligned)]))
                   for t in tools}
            for t in tools:
                sec, rss = med[t]
                ratio = rss_ratio = ""
                peers = [p for p in COMPARED_WITH.get(t, []) if p in tools]
                fastest = min(peers, key=lambda p: med[p][0]) if peers else None
                if fastest:
                    ratio = f"{med[fastest][0] / sec:.2f}x ({fastest})"
                    rss_ratio = f"{rss / med[fastest][1]:.2f}"
                print(f"| {'aligned' if aligned else 'non-aligned'} | {t} | {sec:.3f} | {block_mb / sec:.0f} | {rss:.0f} | {ratio} | {rss_ratio} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
