"""Writes Zarr arrays with zarr-python (v3 and v2 formats) in every data type and codec the installed
zarr-python and numcodecs offer, then checks that tessera reads each one like zarr-python (issue 30).

    .venv/bin/python scripts/zarr_peer_sweep.py WORK_FOLDER [--report report.json] [--timeout 600]

Purpose: the Zarr half of the sweep scripts/hdf5_corpus_check.py does for HDF5; a one-off check, not
a test (CI's Zarr peer tests are tests/interop/test_zarr_*.py). Arrays are written under WORK_FOLDER
(created; nothing is downloaded). Each case: a data type, a format (3 or 2) and a codec chain;
zarr-python writes a small random array with uneven edge chunks, and the case is

  peer refused   zarr-python cannot write or read back this combination (skipped)
  equal          tessera.open(path) gives zarr-python's dtype, shape and values, whole and through
                 random selections (exact, NaN-aware; object arrays element by element)
  wrong          anything else (the first difference is reported)
  refused        tessera raised (error class and message kept; the summary groups them by cause)
  crashed/hung   the checking subprocess died or stopped answering in that case

The cases run in a subprocess, restarted after a crash past the case that crashed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hdf5_corpus_check import _as_array, _first_difference, _random_selection, _values_equal, refusal_cause  # noqa: E402

NUMERIC = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
           "float64", "complex64", "complex128"]
OTHER = ["S7", "U5", "V6", "str", "bytes", "datetime64[ms]", "timedelta64[s]", "structured"]


def _codecs(fmt: int, dtype: str):
    """(case name, create_array keyword arguments) for every codec chain worth one case; a filter
    numcodecs may refuse to build for the dtype comes as a function, called inside the case (where
    its refusal is the peer's)."""
    import numcodecs
    import zarr.codecs as zc

    yield "default", {}
    yield "none", {"compressors": None}
    if fmt == 3:
        yield "bytes-big", {"serializer": zc.BytesCodec(endian="big"), "compressors": None}
        yield "transpose", {"filters": [zc.TransposeCodec(order=(1, 0))]}
        yield "gzip", {"compressors": [zc.GzipCodec(level=5)]}
        yield "zstd-checksum", {"compressors": [zc.ZstdCodec(level=3, checksum=True)]}
        yield "crc32c", {"compressors": [zc.Crc32cCodec()]}
        for cname in ("lz4", "lz4hc", "zstd", "zlib", "blosclz"):
            for shuffle in ("noshuffle", "shuffle", "bitshuffle"):
                yield f"blosc-{cname}-{shuffle}", {"compressors": [zc.BloscCodec(cname=cname, shuffle=shuffle)]}
        yield "sharded", {"shards": (8, 6)}
        for name in ("Zlib", "BZ2", "LZMA", "LZ4", "Zstd", "GZip", "Blosc", "Adler32", "CRC32", "CRC32C",
                     "Fletcher32", "JenkinsLookup3"):
            yield f"numcodecs.{name.lower()}", {"compressors": [getattr(zc, name)()]}
        for name, make in (("Delta", lambda: zc.Delta(dtype=dtype)), ("Shuffle", lambda: zc.Shuffle()),
                           ("FixedScaleOffset", lambda: zc.FixedScaleOffset(offset=5, scale=10, dtype=dtype)),
                           ("Quantize", lambda: zc.Quantize(digits=3, dtype=dtype)),
                           ("BitRound", lambda: zc.BitRound(keepbits=6)), ("PackBits", lambda: zc.PackBits()),
                           ("AsType", lambda: zc.AsType(encode_dtype="float64", decode_dtype=dtype))):
            yield f"numcodecs.{name.lower()}", lambda make=make: {"filters": [make()]}
    else:
        for name in ("Zlib", "GZip", "BZ2", "LZMA", "LZ4", "Zstd", "Blosc"):
            yield f"v2-{name.lower()}", {"compressors": getattr(numcodecs, name)()}
        yield "v2-blosc-bitshuffle", {"compressors": numcodecs.Blosc(cname="zstd", shuffle=numcodecs.Blosc.BITSHUFFLE)}
        for name, make in (("delta", lambda: numcodecs.Delta(dtype=dtype)), ("shuffle", lambda: numcodecs.Shuffle()),
                           ("fixedscaleoffset", lambda: numcodecs.FixedScaleOffset(offset=5, scale=10, dtype=dtype)),
                           ("quantize", lambda: numcodecs.Quantize(digits=3, dtype=dtype)),
                           ("packbits", lambda: numcodecs.PackBits()),
                           ("astype", lambda: numcodecs.AsType(encode_dtype="float64", decode_dtype=dtype)),
                           ("categorize", lambda: numcodecs.Categorize(labels=["a", "bb", "ccc"], dtype=dtype))):
            yield f"v2-filter-{name}", lambda make=make: {"filters": [make()]}


def _data(dtype: str, shape, rng):
    import numpy as np

    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)
    if dtype.startswith(("float", "complex")):
        v = rng.normal(size=shape) * 100
        if dtype.startswith("complex"):
            v = v + 1j * rng.normal(size=shape)
        v = v.astype(dtype)
        v.flat[3] = np.nan
        return v
    if dtype == "S7":
        return np.array([b"x" * int(k) for k in rng.integers(0, 8, size=np.prod(shape))], dtype="S7").reshape(shape)
    if dtype == "U5":
        return np.array(["é" * int(k) for k in rng.integers(0, 6, size=np.prod(shape))], dtype="U5").reshape(shape)
    if dtype == "V6":
        return np.frombuffer(rng.bytes(6 * int(np.prod(shape))), dtype="V6").reshape(shape)
    if dtype == "str":
        return np.array(["ab" * int(k) + "ü" for k in rng.integers(0, 5, size=np.prod(shape))], dtype=object).reshape(shape)
    if dtype == "bytes":
        return np.array([b"\x00z" * int(k) for k in rng.integers(0, 5, size=np.prod(shape))], dtype=object).reshape(shape)
    if dtype.startswith(("datetime64", "timedelta64")):
        return rng.integers(0, 10**9, size=shape).astype(dtype)
    if dtype == "structured":
        v = np.zeros(shape, dtype=[("a", "<i4"), ("b", "<f8")])
        v["a"] = rng.integers(-9, 9, size=shape)
        v["b"] = rng.normal(size=shape)
        return v
    raise ValueError(dtype)


def _check_case(folder: Path, fmt: int, dtype: str, codec: str, kwargs: dict, rng) -> dict:
    import numpy as np
    import zarr

    import tessera

    record = {"format": fmt, "dtype": dtype, "codec": codec}
    path = folder / f"v{fmt}-{dtype.replace('[', '_').replace(']', '')}-{codec}.zarr"
    shape, chunks = (13, 11), (4, 3)
    try:
        if callable(kwargs):
            kwargs = kwargs()
        values = _data(dtype, shape, rng)
        write_dtype = str if dtype == "str" else bytes if dtype == "bytes" else values.dtype
        a = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=write_dtype, zarr_format=fmt,
                              overwrite=True, **kwargs)
        a[...] = values
        expected = np.asarray(zarr.open_array(str(path), mode="r")[...])
        if expected.dtype.kind == "T":  # numpy's StringDType: tessera gives object arrays of str
            expected = expected.astype(object)
    except Exception as exc:  # noqa: BLE001  (a combination zarr-python refuses is skipped)
        return {**record, "class": "peer refused", "error": type(exc).__name__, "message": str(exc)[:300]}
    try:
        array = tessera.open(str(path))
        got = np.asarray(array[...])
    except Exception as exc:  # noqa: BLE001
        return {**record, "class": "refused", "error": type(exc).__name__, "message": str(exc).replace("\n", " ")[:400]}
    if not _values_equal(expected, got):
        return {**record, "class": "wrong", "difference": _first_difference(expected, got)}
    for _ in range(4):
        index = _random_selection(expected.shape, rng)
        try:
            part = _as_array(array[index], got.dtype)
        except Exception as exc:  # noqa: BLE001
            return {**record, "class": "refused", "selection": repr(index), "error": type(exc).__name__,
                    "message": str(exc)[:400]}
        want = _as_array(expected[index], expected.dtype)
        if not _values_equal(want, part):
            return {**record, "class": "wrong", "selection": repr(index), "difference": _first_difference(want, part)}
    return {**record, "class": "equal"}


def _cases():
    for fmt in (3, 2):
        for dtype in NUMERIC + OTHER:
            for codec, kwargs in _codecs(fmt, dtype if dtype in NUMERIC else "float64"):
                yield fmt, dtype, codec, kwargs


def _child(folder: Path, skip: int) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    for k, (fmt, dtype, codec, kwargs) in enumerate(_cases()):
        if k < skip:
            continue
        print(json.dumps({"event": "start", "case": k}), flush=True)
        try:
            record = _check_case(folder, fmt, dtype, codec, kwargs, rng)
        except Exception as exc:  # noqa: BLE001  (the checker's own failure)
            record = {"format": fmt, "dtype": dtype, "codec": codec, "class": "checker error", "message": str(exc)[:300]}
        print(json.dumps({"case": k, **record}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds the whole child may run")
    parser.add_argument("--child-skip", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_skip is not None:
        _child(args.folder, args.child_skip)
        return 0
    args.folder.mkdir(parents=True, exist_ok=True)
    records, skip = [], 0
    while True:
        command = [sys.executable, os.path.abspath(__file__), str(args.folder), "--child-skip", str(skip)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            out, failed, how = done.stdout, done.returncode != 0, "crashed"
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            failed, how = True, "hung"
        current = None
        for line in out.splitlines():
            r = json.loads(line)
            if r.get("event") == "start":
                current = r["case"]
            else:
                records.append(r)
                current = None
        if not failed:
            break
        if current is None:
            print(f"checker {how} outside a case", file=sys.stderr)
            break
        fmt, dtype, codec, _ = list(_cases())[current]
        records.append({"case": current, "format": fmt, "dtype": dtype, "codec": codec, "class": how})
        skip = current + 1
    counts = Counter(r["class"] for r in records)
    print("| cases | " + " | ".join(counts) + " |")
    print("|---:|" + "---:|" * len(counts))
    print(f"| {len(records)} | " + " | ".join(str(n) for n in counts.values()) + " |")
    causes = Counter(refusal_cause(r) for r in records if r["class"] == "refused")
    if causes:
        print("\n| refusal cause | cases |\n|---|---:|")
        for cause, n in causes.most_common():
            print(f"| {cause} | {n} |")
    for r in records:
        if r["class"] in ("wrong", "crashed", "hung", "checker error"):
            print(f"{r['class']}: v{r['format']} {r['dtype']} {r['codec']}: {r.get('difference') or r.get('message', '')}")
    if args.report:
        args.report.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
