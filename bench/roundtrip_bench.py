#!/usr/bin/env python3
"""Read-all and round trip of Zarr v3 arrays: tessera vs tensorstore vs zarr-python with the zarrs
codec pipeline (issue 26; the arrays and operations of a public Zarr v3 benchmark harness).

Three source arrays, uint16, 256 x 2048 x 2048 by default (--scale S divides the two last dims by S),
values (x + y*y//32 + z**3) mod 65536 where (z, y, x) index dims (0, 1, 2), written once per
invocation with tensorstore under --workdir:

  plain     unsharded, 256^3 chunks (clipped to the shape), bytes only (no compression)
  blosclz   the same chunks, blosc blosclz level 9, bitshuffle
  sharded   256^3 shards of 32^3 inner chunks, blosc blosclz level 9, bitshuffle

Two operations per array and tool, each in a fresh child process (peak RSS is that child's, measured
with wait4 through bench_util.run_measured), timed inside the child from open to done (imports and
interpreter start-up excluded; the child's whole wall time is kept in --json):

  read-all    tessera:     tessera.open(path)[...]
              tensorstore: ts.open(spec).result().read().result()
              zarrs:       zarr.config codec_pipeline.path = zarrs.ZarrsCodecPipeline; zarr.open_array(path)[...]
  round trip  read the array and write a copy with the same metadata into a fresh location:
              tessera:     tessera.convert(src, dst) (its defaults come from the source; if the copy's
                           codecs differ from the source's, the table says so)
              tensorstore: destination created from the source's metadata; copied shard by shard
                           (write-chunk boxes), each shard in its own ts.Transaction
              zarrs:       destination created with zarr.create_array from the source's metadata
                           (shape, chunks, shards, serializer, compressors, fill value); copied shard by
                           shard with dst[box] = src[box]

Every round-trip copy is read back with tensorstore after its timing and compared with the source
(values, shape and codec chain); a difference is printed. Tools are interleaved within each run;
the tables show medians of --runs. Ratio = fastest peer's time / tessera's (> 1: tessera faster).
The sources are in the page cache when read (written just before, or read in the previous run).

Run from the repository root:  .venv/bin/python bench/roundtrip_bench.py [--scale 8] [--runs 3] [--json out.json]
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import child_or_parser, fs_type, normalized_codecs, run_json_child  # noqa: E402

DEPTH, EDGE = 256, 2048  # full-size shape: DEPTH x EDGE x EDGE
CHUNK = 256  # unsharded chunk / shard edge
INNER = 32  # inner chunk edge of the sharded array
ARRAYS = ["plain", "blosclz", "sharded"]
ARRAY_LABEL = {"plain": "plain (256^3 chunks, no compression)",
               "blosclz": "blosclz 9 + bitshuffle (256^3 chunks)",
               "sharded": "sharded (32^3 in 256^3 shards, blosclz 9 + bitshuffle)"}
TOOLS = ["tessera", "tensorstore", "zarrs"]
PEERS = ["tensorstore", "zarrs"]
OPS = ["read", "roundtrip"]


def blosc_codec() -> dict:
    return {"name": "blosc", "configuration": {"cname": "blosclz", "clevel": 9, "shuffle": "bitshuffle",
                                                "typesize": 2, "blocksize": 0}}


def bytes_codec() -> dict:
    return {"name": "bytes", "configuration": {"endian": "little"}}


def array_metadata(kind: str, shape: list[int]) -> dict:
    """The zarr3 metadata (tensorstore spec form) of source array KIND."""
    outer = [min(CHUNK, n) for n in shape]
    if kind == "plain":
        codecs = [bytes_codec()]
    elif kind == "blosclz":
        codecs = [bytes_codec(), blosc_codec()]
    elif kind == "sharded":
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [min(INNER, n) for n in outer],
            "codecs": [bytes_codec(), blosc_codec()],
            "index_codecs": [bytes_codec(), {"name": "crc32c"}],
            "index_location": "end"}}]
    else:
        raise ValueError(kind)
    return {"shape": shape, "data_type": "uint16", "fill_value": 0,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": outer}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "codecs": codecs}


def values_block(z0: int, z1: int, y0: int, y1: int, x0: int, x1: int):
    """(x + y*y//32 + z**3) mod 65536 over the box, as uint16. Each term is computed exactly in int64
    and reduced mod 65536; uint16 addition wraps mod 65536, so the sum is the same as in int64."""
    import numpy as np

    z = (np.arange(z0, z1, dtype=np.int64) ** 3 % 65536).astype(np.uint16)[:, None, None]
    y = (np.arange(y0, y1, dtype=np.int64) ** 2 // 32 % 65536).astype(np.uint16)[None, :, None]
    x = (np.arange(x0, x1, dtype=np.int64) % 65536).astype(np.uint16)[None, None, :]
    return (z + y + x).astype("<u2")


def ts_spec(path: str) -> dict:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}


def shard_boxes(shape, outer):
    """Index tuples of the write-chunk (shard, or chunk where unsharded) grid, in C order."""
    grid = [range(0, n, c) for n, c in zip(shape, outer)]
    return [tuple(slice(o, min(o + c, n)) for o, c, n in zip(origin, outer, shape))
            for origin in itertools.product(*grid)]


def make_source(path: Path, kind: str, shape: list[int]) -> None:
    import tensorstore as ts

    spec = dict(ts_spec(str(path)), create=True, delete_existing=True, metadata=array_metadata(kind, shape))
    t = ts.open(spec).result()
    step = min(CHUNK, shape[1])
    for y0 in range(0, shape[1], step):  # slabs of whole chunk / shard rows: no read-modify-write
        y1 = min(y0 + step, shape[1])
        t[:, y0:y1, :].write(values_block(0, shape[0], y0, y1, 0, shape[2])).result()


def zarr_json(path: Path) -> dict:
    with open(path / "zarr.json") as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------
# Child: one tool, one operation, timed from inside.


def child_main(cfg: dict) -> None:
    tool, op, src, dst = cfg["tool"], cfg["op"], cfg["src"], cfg.get("dst")
    note = ""
    if tool == "tessera":
        import tessera

        t0 = time.perf_counter()
        if op == "read":
            a = tessera.open(src)[...]
            assert a.shape == tuple(cfg["shape"])
        else:
            tessera.convert(src, dst)
    elif tool == "tensorstore":
        import tensorstore as ts

        t0 = time.perf_counter()
        s = ts.open(dict(ts_spec(src), open=True)).result()
        if op == "read":
            a = s.read().result()
            assert a.shape == tuple(cfg["shape"])
        else:
            meta = zarr_json(Path(src))
            md = {k: meta[k] for k in ("shape", "data_type", "fill_value", "chunk_grid", "chunk_key_encoding",
                                       "codecs", "dimension_names", "attributes") if k in meta}
            d = ts.open(dict(ts_spec(dst), create=True, delete_existing=True, metadata=md)).result()
            outer = meta["chunk_grid"]["configuration"]["chunk_shape"]
            for box in shard_boxes(list(s.shape), outer):
                with ts.Transaction() as txn:
                    d.with_transaction(txn)[box] = s[box].read().result()
    elif tool == "zarrs":
        import zarr

        if cfg.get("pipeline"):
            zarr.config.set({"codec_pipeline.path": cfg["pipeline"]})
        t0 = time.perf_counter()
        s = zarr.open_array(src, mode="r")
        note = type(s._async_array.codec_pipeline).__name__
        if op == "read":
            a = s[...]
            assert a.shape == tuple(cfg["shape"])
        else:
            d = zarr.create_array(dst, shape=s.shape, dtype=s.dtype, chunks=s.chunks, shards=s.shards,
                                  filters=s.filters, serializer=s.serializer, compressors=s.compressors,
                                  fill_value=s.fill_value, overwrite=True)
            outer = s.shards if s.shards is not None else s.chunks
            for box in shard_boxes(list(s.shape), outer):
                d[box] = s[box]
    else:
        raise SystemExit(f"unknown tool {tool}")
    print(json.dumps({"seconds": time.perf_counter() - t0, "note": note}))


# ---------------------------------------------------------------------------------------------
# Parent.


def compare_codecs(meta: dict) -> list:
    return normalized_codecs(meta["codecs"])


def codec_summary(codecs: list) -> str:
    """A short name for a codec chain: 'bytes', 'blosc blosclz 9 bitshuffle', 'shard[32,32,32](...)'."""
    parts = []
    for c in codecs:
        cfg = c.get("configuration", {})
        if c["name"] == "sharding_indexed":
            parts.append(f"shard{cfg['chunk_shape']}({codec_summary(cfg['codecs'])})")
        elif c["name"] == "blosc":
            parts.append(f"blosc {cfg.get('cname')} {cfg.get('clevel')} {cfg.get('shuffle')}")
        elif c["name"] in ("bytes",):
            continue
        else:
            parts.append(c["name"] + (f" {cfg['level']}" if "level" in cfg else ""))
    return " + ".join(parts) or "uncompressed"


def verify(src: Path, dst: Path) -> list[str]:
    """Problems of DST as a copy of SRC: values (read with tensorstore), shape, chunk grid, codecs."""
    import numpy as np
    import tensorstore as ts

    problems = []
    ms, md = zarr_json(src), zarr_json(dst)
    for key in ("shape", "data_type", "fill_value", "chunk_grid"):
        if ms.get(key) != md.get(key):
            problems.append(f"{key} {md.get(key)} != source's {ms.get(key)}")
    cs, cd = compare_codecs(ms), compare_codecs(md)
    if cs != cd:
        problems.append(f"codecs '{codec_summary(cd)}' != source's '{codec_summary(cs)}'")
    s = ts.open(dict(ts_spec(str(src)), open=True)).result()
    d = ts.open(dict(ts_spec(str(dst)), open=True)).result()
    if s.shape != d.shape:
        return problems + [f"shape {d.shape} != {s.shape}"]
    step = min(CHUNK, s.shape[1])
    for y0 in range(0, s.shape[1], step):
        a = s[:, y0:y0 + step, :].read().result()
        b = d[:, y0:y0 + step, :].read().result()
        if not np.array_equal(a, b):
            bad = np.argwhere(a != b)
            problems.append(f"{len(bad)} values differ in y {y0}:{y0 + step}, first at {tuple(bad[0] + [0, y0, 0])}")
            break
    return problems


def zarrs_pipeline() -> tuple[str | None, str]:
    """The codec pipeline for the 'zarrs' column and its label: zarrs if importable, else plain zarr-python."""
    try:
        r = subprocess.run([sys.executable, "-c", "import zarrs, zarr; print(zarr.__version__)"],
                           capture_output=True, text=True, check=True)
        from importlib.metadata import version

        return "zarrs.ZarrsCodecPipeline", f"zarr-python {r.stdout.strip()} + zarrs {version('zarrs')}"
    except (subprocess.CalledProcessError, Exception):  # noqa: BLE001
        import zarr

        return None, f"zarr-python {zarr.__version__} (zarrs NOT installed: plain zarr-python pipeline)"


def main() -> None:
    ap = child_or_parser(child_main, __doc__)
    if ap is None:
        return
    ap.add_argument("--scale", type=int, default=1, help="divide the two last dims (2048) by this (default 1)")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement; the median is shown (default 3)")
    ap.add_argument("--arrays", default=",".join(ARRAYS), help="comma-separated subset of " + ",".join(ARRAYS))
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of " + ",".join(TOOLS))
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/roundtrip_bench"), help="temp dirs go here")
    ap.add_argument("--json", type=Path, default=None, help="dump the raw numbers here")
    args = ap.parse_args()
    arrays, tools = args.arrays.split(","), args.tools.split(",")
    shape = [DEPTH, EDGE // args.scale, EDGE // args.scale]
    pipeline, zarrs_label = zarrs_pipeline()
    import tessera  # noqa: F401

    args.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="roundtrip-", dir=args.workdir))
    t_start = time.perf_counter()
    raw: list[dict] = []
    problems: dict = {}
    try:
        for kind in arrays:
            t0 = time.perf_counter()
            make_source(work / f"{kind}.zarr", kind, shape)
            print(f"  wrote {kind} {shape} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        for rep in range(args.runs):
            for kind in arrays:
                src = work / f"{kind}.zarr"
                for op in OPS:
                    # Each tool goes first in turn: the first after a write meets that write's
                    # writeback, and the caches warm differently.
                    for tool in tools[rep % len(tools):] + tools[:rep % len(tools)]:
                        dst = work / f"copy-{tool}.zarr"
                        shutil.rmtree(dst, ignore_errors=True)
                        os.sync()  # no dirty pages of an earlier write flushed while this one is timed
                        cfg = {"tool": tool, "op": op, "src": str(src), "dst": str(dst), "shape": shape,
                               "pipeline": pipeline}
                        w0 = time.perf_counter()
                        result, rss = run_json_child(__file__, cfg)
                        wall = time.perf_counter() - w0
                        entry = {"run": rep + 1, "array": kind, "op": op, "tool": tool, "seconds": result["seconds"],
                                 "child_wall_s": wall, "peak_rss_mib": rss}
                        if result.get("note"):
                            entry["pipeline"] = result["note"]
                        if op == "roundtrip":
                            entry["copy_bytes"] = sum(p.stat().st_size for p in dst.rglob("*") if p.is_file())
                            entry["copy_codecs"] = codec_summary(compare_codecs(zarr_json(dst)))
                            bad = verify(src, dst)
                            entry["problems"] = bad
                            for b in bad:
                                print(f"  MISMATCH run {rep + 1} {kind} {tool} copy: {b}", file=sys.stderr)
                                problems.setdefault((kind, tool), set()).add(b)
                            shutil.rmtree(dst, ignore_errors=True)
                        raw.append(entry)
                        print(f"  run {rep + 1}: {kind:8s} {op:9s} {tool:12s} {result['seconds']:7.3f} s "
                              f"{rss:7.0f} MiB", file=sys.stderr)
        total = time.perf_counter() - t_start
        src_bytes = {k: sum(p.stat().st_size for p in (work / f"{k}.zarr").rglob("*") if p.is_file()) for k in arrays}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def med(kind, op, tool, key="seconds"):
        return statistics.median(e[key] for e in raw if (e["array"], e["op"], e["tool"]) == (kind, op, tool))

    def ratio(kind, op):
        peers = [p for p in PEERS if p in tools]
        if "tessera" not in tools or not peers:
            return ""
        return f"{min(med(kind, op, p) for p in peers) / med(kind, op, 'tessera'):.2f}x"

    mib = shape[0] * shape[1] * shape[2] * 2 / 2**20
    from importlib.metadata import version

    col = {"tessera": "tessera", "tensorstore": f"tensorstore {version('tensorstore')}", "zarrs": zarrs_label}
    names = " / ".join(col[t] for t in tools)
    print(f"\n{shape[0]} x {shape[1]} x {shape[2]} uint16 ({mib:.0f} MiB) per array (--scale {args.scale}); "
          f"{fs_type(args.workdir)}; {os.cpu_count()} cores; median of {args.runs}, each a fresh process; "
          f"columns: {names}; ratio = fastest peer / tessera (> 1: tessera faster)\n")
    print(f"| array | read-all {' / '.join(tools)} (s) | ratio | round trip {' / '.join(tools)} (s) | ratio | "
          f"round-trip peak RSS {' / '.join(tools)} (MiB) |")
    print("|---|---|---:|---|---:|---|")
    for kind in arrays:
        rd = " / ".join(f"{med(kind, 'read', t):.2f}" for t in tools)
        rt = " / ".join(f"{med(kind, 'roundtrip', t):.2f}" for t in tools)
        rss = " / ".join(f"{med(kind, 'roundtrip', t, 'peak_rss_mib'):.0f}" for t in tools)
        print(f"| {ARRAY_LABEL[kind]} | {rd} | {ratio(kind, 'read')} | {rt} | {ratio(kind, 'roundtrip')} | {rss} |")
    print()
    for kind in arrays:
        copies = []
        for t in tools:
            es = [e for e in raw if (e["array"], e["op"], e["tool"]) == (kind, "roundtrip", t)]
            copies.append(f"{t} {es[-1]['copy_codecs']} {es[-1]['copy_bytes'] / 2**20:.0f} MiB")
        print(f"- {kind}: source {src_bytes[kind] / 2**20:.0f} MiB; copies: " + "; ".join(copies))
    used = sorted({e["pipeline"] for e in raw if e.get("pipeline")})
    if used:
        print(f"- zarr-python codec pipeline in the zarrs column: {', '.join(used)}")
    for (kind, tool), bad in sorted(problems.items()):
        for b in sorted(bad):
            print(f"- **{kind}, {tool}'s copy differs from the source: {b}**")
    if not problems:
        print("- every round-trip copy holds the source's values, shape, chunk grid and codecs")
    print(f"\ntotal {total:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"shape": shape, "scale": args.scale, "runs": args.runs, "cores": os.cpu_count(),
                                         "columns": col, "total_s": total, "source_bytes": src_bytes,
                                         "measurements": raw}, indent=1))


if __name__ == "__main__":
    main()
