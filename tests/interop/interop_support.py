"""Helpers shared by the interop tests: the tessera CLI wrapper, peer writers, test data and checks.

Everything here is plain functions over numpy arrays and directories; the pytest fixtures that hand
these to tests live in conftest.py. Arrays are C order with dimension 0 slowest, like the CLI's raw
byte streams.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BINARY = REPO_ROOT / "build" / "release" / "tessera"

# Zarr v3 data type name -> little-endian numpy dtype (the CLI's raw byte order).
ZARR_DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype("?"),
    "int8": np.dtype("i1"),
    "int16": np.dtype("<i2"),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "uint8": np.dtype("u1"),
    "uint16": np.dtype("<u2"),
    "uint32": np.dtype("<u4"),
    "uint64": np.dtype("<u8"),
    "float16": np.dtype("<f2"),
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "complex64": np.dtype("<c8"),
    "complex128": np.dtype("<c16"),
}
ALL_DTYPES = list(ZARR_DTYPES)

BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC32C = {"name": "crc32c"}
INDEX_CODECS = [BYTES_LE, CRC32C]

# Exit codes a crashing C++ program ends with when run through a shell (128 + signal) or directly
# (negative in subprocess): SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGILL.
CRASH_CODES = {128 + 6, 128 + 7, 128 + 8, 128 + 11, 128 + 4}


def zarr_dtype_name(dtype: np.dtype) -> str:
    """The Zarr v3 name of a numpy dtype, ignoring byte order."""
    native = np.dtype(dtype).newbyteorder("=")
    for name, dt in ZARR_DTYPES.items():
        if dt.newbyteorder("=") == native:
            return name
    raise KeyError(f"no zarr v3 name for {dtype}")


# ---------------------------------------------------------------------------------------------
# The tessera CLI.


@dataclass(frozen=True)
class Tessera:
    """Runs the tessera binary. All raw byte streams are little-endian C order."""

    binary: Path

    def run(self, args: Sequence[Any], input_bytes: bytes | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        """Runs `tessera ARGS` with INPUT_BYTES on stdin; never raises on a non-zero exit."""
        return subprocess.run([str(self.binary), *map(str, args)], input=input_bytes,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)

    def run_ok(self, args: Sequence[Any], input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
        proc = self.run(args, input_bytes)
        assert proc.returncode == 0, (
            f"tessera {' '.join(map(str, args))} exited {proc.returncode}\n"
            f"stderr: {proc.stderr.decode(errors='replace')}")
        return proc

    def read(self, store: Path, slice_expr: str | None, dtype: str | np.dtype,
             expected_shape: Sequence[int]) -> np.ndarray:
        """`tessera read STORE --slice EXPR` as an array of EXPECTED_SHAPE (the numpy result shape)."""
        args = ["read", store]
        if slice_expr is not None:
            # One token, so an expression starting with "-" cannot be taken for an option.
            args.append(f"--slice={slice_expr}")
        out = self.run_ok(args).stdout
        dt = ZARR_DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype).newbyteorder("<")
        expected_bytes = int(np.prod(expected_shape, dtype=np.int64)) * dt.itemsize
        assert len(out) == expected_bytes, (
            f"tessera read {store} --slice {slice_expr!r}: {len(out)} bytes, expected {expected_bytes} "
            f"for shape {tuple(expected_shape)} of {dt}")
        return np.frombuffer(out, dtype=dt).reshape(tuple(expected_shape))

    def write(self, out: Path, array: np.ndarray, chunk: Sequence[int],
              shard_chunks: Sequence[int] | None = None, codec: str | None = None,
              level: int | None = None, index_location: str | None = None,
              fill_value: Any = None, unbounded: bool = False, input_file: Path | None = None,
              threads: int | None = None) -> subprocess.CompletedProcess:
        """`tessera stream OUT` fed with ARRAY's bytes (stdin, or INPUT_FILE when given).

        UNBOUNDED declares dimension 0 as 0 so the CLI must infer it from the byte count.
        """
        dtype = zarr_dtype_name(array.dtype)
        raw = np.ascontiguousarray(array, dtype=ZARR_DTYPES[dtype]).tobytes()
        shape = list(array.shape)
        if unbounded:
            shape[0] = 0
        args = ["stream", out, "--format", "zarr3", "--dtype", dtype, "--shape", join_ints(shape),
                "--chunk", join_ints(chunk)]
        if shard_chunks is not None:
            args += ["--shard-chunks", join_ints(shard_chunks)]
        if codec is not None:
            args += ["--codec", codec]
        if level is not None:
            args += ["--level", level]
        if index_location is not None:
            args += ["--index-location", index_location]
        if fill_value is not None:
            args.append(f"--fill-value={fill_value}")  # one token: values may start with "-"
        if threads is not None:
            args += ["--threads", threads]
        if input_file is not None:
            Path(input_file).write_bytes(raw)
            return self.run_ok([*args, "--input", input_file])
        return self.run_ok(args, raw)

    def info(self, store: Path) -> dict:
        return json.loads(self.run_ok(["info", store, "--json"]).stdout)


def join_ints(values: Sequence[int]) -> str:
    return ",".join(str(int(v)) for v in values)


# The kinds of error the CLI reports (`tessera: error: <kind>: ...`, exit 1) and "usage" (exit 2).
ERROR_KINDS = ("invalid argument", "out of range", "not found", "corrupt data", "I/O error", "unsupported",
               "out of resources", "failed precondition", "usage")


def assert_cli_error(proc: subprocess.CompletedProcess, kind: str | tuple[str, ...], *needles: str) -> str:
    """Checks a clean failure of KIND (one of ERROR_KINDS, or a tuple of those where damage at random
    may be reported as any of them): no crash, a line on stderr that starts with "tessera: error:
    KIND:", exit code 2 for a usage error and 1 for any other, and each NEEDLE on stderr."""
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    assert kinds and all(k in ERROR_KINDS for k in kinds), f"test setup: unknown error kind {kind!r}"
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode != 0, f"expected failure, got exit 0; stderr: {err!r}"
    assert proc.returncode > 0 and proc.returncode not in CRASH_CODES, (
        f"crashed with exit {proc.returncode}; stderr: {err!r}")
    for marker in ("terminate called", "Segmentation fault", "Aborted", "AddressSanitizer",
                   "runtime error:", "Traceback"):
        assert marker not in err, f"stderr shows a crash ({marker!r}): {err!r}"
    lines = [line for line in err.splitlines() if line.startswith("tessera: error:")]
    assert lines, f"stderr lacks the 'tessera: error:' prefix: {err!r}"
    seen = next((k for k in kinds if lines[0].startswith(f"tessera: error: {k}: ")), None)
    assert seen is not None, f"expected a {' or '.join(kinds)} error ('tessera: error: <kind>: ...'), got {lines[0]!r}"
    want = 2 if seen == "usage" else 1
    assert proc.returncode == want, f"exit code {proc.returncode}, not {want} for a {seen!r} error; stderr: {err!r}"
    for needle in needles:
        assert needle in err, f"stderr does not mention {needle!r}: {err!r}"
    return err


# ---------------------------------------------------------------------------------------------
# Peak memory of a child process.

# Runs a command as the only child of a fresh, small interpreter and reports its peak RSS: nothing but
# that child is in RUSAGE_CHILDREN (ru_maxrss is a maximum over children, not a sum), and the memory a
# forked child inherits as its high-water mark before exec is only this small process's.
_MEASURE_SCRIPT = r"""
import json, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "maxrss_kib": ru.ru_maxrss, "stderr": p.stderr.decode(errors="replace")}))
"""
_LAUNCH_SCRIPT = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


def peak_rss_mib(cmd: Sequence[Any], env: dict | None = None) -> float:
    """The peak RSS (MiB) of CMD run as the only child of a small interpreter; CMD must succeed."""
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", _MEASURE_SCRIPT, *map(str, cmd)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    r = json.loads(proc.stdout)
    assert r["rc"] == 0, f"{' '.join(map(str, cmd))} exited {r['rc']}: {r['stderr']}"
    return r["maxrss_kib"] / 1024


def plan_numbers(text: str) -> dict[str, float]:
    """The MiB figures of a --plan (or a stream's plan): 'peak' (the planned peak, required), 'slabs'
    (convert's read slabs, in all), 'queue' (an object store's upload queue); absent ones are 0."""
    m = re.search(r"planned peak:\s*([0-9.]+)\s*MiB", text)
    assert m, f"the plan lacks 'planned peak: X MiB': {text!r}"
    out = {"peak": float(m.group(1)), "slabs": 0.0, "queue": 0.0}
    m = re.search(r"read slabs:\s*(\d+) x \d+ rows \(([0-9.]+) MiB each", text)
    if m:
        out["slabs"] = int(m.group(1)) * float(m.group(2))
    m = re.search(r"upload queue:\s*([0-9.]+)\s*MiB", text)
    if m:
        out["queue"] = float(m.group(1))
    return out


def run_launched(cmd: Sequence[Any], env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs CMD (text output captured) started by a small interpreter: a Python child's own peak RSS
    (RUSAGE_SELF) starts at its parent's RSS when forked, which from pytest is ~200 MiB."""
    return subprocess.run([sys.executable, "-I", "-S", "-c", _LAUNCH_SCRIPT, *map(str, cmd)],
                          capture_output=True, text=True, env=env, timeout=300)


# ---------------------------------------------------------------------------------------------
# Test data and comparison.


def stable_seed(*parts: Any) -> int:
    """A seed from PARTS that is the same in every process (Python's hash() of a str is not)."""
    return zlib.crc32(repr(parts).encode())


def random_data(rng: np.random.Generator, dtype: str, shape: Sequence[int]) -> np.ndarray:
    """Full-range random values of zarr DTYPE; floats include NaN, ±inf, -0.0 and subnormals."""
    dt = ZARR_DTYPES[dtype]
    shape = tuple(shape)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt.newbyteorder("="))
    if dt.kind == "f":
        a = (rng.standard_normal(shape) * 1000).astype(dt.newbyteorder("="))
        _sprinkle_specials(a)
        return a
    real_dt = np.dtype(f"f{dt.itemsize // 2}")
    out = np.empty(shape, dtype=dt.newbyteorder("="))
    out.real = (rng.standard_normal(shape) * 1000).astype(real_dt)
    im = (rng.standard_normal(shape) * 1000).astype(real_dt)
    _sprinkle_specials(im)
    out.imag = im
    return out


def _sprinkle_specials(a: np.ndarray) -> None:
    specials = [np.nan, np.inf, -np.inf, -0.0, np.finfo(a.dtype).smallest_subnormal, np.finfo(a.dtype).max]
    flat = a.reshape(-1)
    for i, v in enumerate(specials[: flat.size]):
        flat[(i * 7919) % flat.size] = v


def smooth_data(dtype: str, shape: Sequence[int]) -> np.ndarray:
    """Compressible deterministic data (a ramp), so compressors actually shrink chunks."""
    dt = ZARR_DTYPES[dtype].newbyteorder("=")
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        return (np.arange(n) // 5 % 2 == 0).reshape(shape)
    ramp = np.arange(n) // 3
    if dt.kind in "iu":
        return (ramp % min(int(np.iinfo(dt).max), 1000)).astype(dt).reshape(shape)
    return (ramp * 0.25).astype(dt).reshape(shape)


def assert_identical(actual: np.ndarray, expected: np.ndarray, context: str = "") -> None:
    """Same shape, same dtype (ignoring byte order) and the same bits, except that NaNs of any
    payload are equal to each other (fill values written as "NaN" need not keep numpy's payload)."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    where = f" ({context})" if context else ""
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}{where}"
    assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (
        f"dtype {actual.dtype} != {expected.dtype}{where}")
    a = actual.astype(actual.dtype.newbyteorder("="), copy=True)
    e = expected.astype(expected.dtype.newbyteorder("="), copy=True)
    if a.dtype.kind == "c":
        a = a.view(np.dtype(f"f{a.dtype.itemsize // 2}"))
        e = e.view(np.dtype(f"f{e.dtype.itemsize // 2}"))
    if a.dtype.kind == "f":
        a_nan, e_nan = np.isnan(a), np.isnan(e)
        if not np.array_equal(a_nan, e_nan):
            raise AssertionError(f"NaN positions differ at {_first_mismatches(a_nan, e_nan)}{where}")
        a[a_nan] = 0
        e[e_nan] = 0
    bits = np.dtype(f"u{a.dtype.itemsize}") if a.dtype.kind != "b" else np.dtype("u1")
    a_bits, e_bits = a.view(bits), e.view(bits)
    if not np.array_equal(a_bits, e_bits):
        raise AssertionError(
            f"values differ{where}: first mismatches (index, actual, expected): "
            f"{_first_mismatches(a_bits, e_bits, actual_values=a, expected_values=e)}")


def _first_mismatches(a, b, actual_values=None, expected_values=None, limit=5):
    idx = np.argwhere(a != b)[:limit]
    av = a if actual_values is None else actual_values
    ev = b if expected_values is None else expected_values
    return [(tuple(int(i) for i in ix), av[tuple(ix)].item(), ev[tuple(ix)].item()) for ix in idx]


def filled(shape: Sequence[int], dtype: str, fill_value: Any) -> np.ndarray:
    return np.full(tuple(shape), fill_value, dtype=ZARR_DTYPES[dtype].newbyteorder("="))


# ---------------------------------------------------------------------------------------------
# Random numpy basic indexing, as a CLI --slice expression and as a numpy index tuple.


def random_slice(rng: np.random.Generator, shape: Sequence[int]) -> tuple[str, tuple]:
    """A random valid basic index over SHAPE: integers (negative too), slices with any field
    missing, negative and out-of-range bounds, negative steps, empty ranges; sometimes fewer
    entries than dimensions."""
    n_entries = len(shape)
    if len(shape) > 1 and rng.random() < 0.2:
        n_entries = int(rng.integers(1, len(shape)))
    texts, index = [], []
    for dim in range(n_entries):
        n = int(shape[dim])
        if rng.random() < 0.2:
            i = int(rng.integers(-n, n))
            texts.append(str(i))
            index.append(i)
            continue
        parts = []
        for _ in range(2):
            r = rng.random()
            if r < 0.3:
                parts.append(None)
            elif r < 0.85:
                parts.append(int(rng.integers(-n, n + 1)))
            else:  # out of range: numpy clamps
                parts.append(int(rng.choice([-3 * n - 2, 3 * n + 2])))
        r = rng.random()
        if r < 0.35:
            step = None
        elif r < 0.7:
            step = int(rng.integers(1, max(2, n)))
        else:
            step = -int(rng.integers(1, max(2, n)))
        start, stop = parts
        texts.append(slice_text(start, stop, step, short=rng.random() < 0.3))
        index.append(slice(start, stop, step))
    return ",".join(texts), tuple(index)


def slice_text(start, stop, step, short=False) -> str:
    f = lambda v: "" if v is None else str(v)
    if step is None and short:
        return f"{f(start)}:{f(stop)}"
    return f"{f(start)}:{f(stop)}:{f(step)}"


# ---------------------------------------------------------------------------------------------
# Peer writers.


WRITERS = ["zarr", "tensorstore"]


def write_peer(writer: str, path: Path, data: np.ndarray, *, grid: Sequence[int], codecs: list,
               fill_value: Any = None, chunk_key_encoding: dict | None = None,
               regions: Sequence[tuple] | None = None) -> None:
    """Writes DATA as a Zarr v3 array with WRITER ("zarr" for zarr-python 3, or "tensorstore").

    GRID is the chunk grid's chunk_shape (the shard shape when CODECS is sharded) and CODECS the
    zarr.json codecs list. CHUNK_KEY_ENCODING is in zarr.json form ({"name", "configuration"}).
    With REGIONS, only DATA[region] for each region is written; the rest stays unwritten.
    """
    if writer == "zarr":
        _zarr_write(path, data, grid, codecs, fill_value, chunk_key_encoding, regions)
    elif writer == "tensorstore":
        _tensorstore_write(path, data, grid, codecs, fill_value, chunk_key_encoding, regions)
    else:
        raise ValueError(writer)


def _zarr_write(path, data, grid, codecs, fill_value, chunk_key_encoding, regions):
    import zarr

    # zarr.json's codecs list -> create_array's filters / serializer / compressors.
    serializer_at = next(i for i, c in enumerate(codecs) if c["name"] in ("bytes", "sharding_indexed"))
    kwargs: dict[str, Any] = {}
    if fill_value is not None:
        kwargs["fill_value"] = fill_value
    if chunk_key_encoding is not None:
        kwargs["chunk_key_encoding"] = chunk_key_encoding
    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=tuple(grid),
                            filters=codecs[:serializer_at] or None, serializer=codecs[serializer_at],
                            compressors=codecs[serializer_at + 1:] or None, overwrite=True, **kwargs)
    if regions is None:
        arr[...] = data
    else:
        for region in regions:
            arr[region] = data[region]


def _tensorstore_write(path, data, grid, codecs, fill_value, chunk_key_encoding, regions):
    import tensorstore as ts

    metadata: dict[str, Any] = {
        "shape": list(data.shape),
        "data_type": zarr_dtype_name(data.dtype),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}},
        "codecs": codecs,
    }
    if fill_value is not None:
        metadata["fill_value"] = fill_value_json(fill_value)
    if chunk_key_encoding is not None:
        metadata["chunk_key_encoding"] = chunk_key_encoding
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}, "metadata": metadata,
            "create": True, "delete_existing": True}
    t = ts.open(spec).result()
    if regions is None:
        t.write(data).result()
    else:
        for region in regions:
            t[region].write(data[region]).result()


def fill_value_json(value: Any) -> Any:
    """A Python fill value in zarr.json form: "NaN"/"Infinity" strings, [re, im] for complex."""
    if isinstance(value, complex):
        return [fill_value_json(value.real), fill_value_json(value.imag)]
    if isinstance(value, float):
        if np.isnan(value):
            return "NaN"
        if np.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return value


def codec_chain(*, inner_chunks: Sequence[int] | None = None, index_location: str = "end",
                compressors: Sequence[dict] = (), endian: str = "little",
                transpose: Sequence[int] | None = None) -> list:
    """A codecs list: [transpose?] bytes compressors..., wrapped in sharding_indexed when INNER_CHUNKS."""
    chain = [] if transpose is None else [{"name": "transpose", "configuration": {"order": list(transpose)}}]
    chain += [{"name": "bytes", "configuration": {"endian": endian}}, *compressors]
    if inner_chunks is None:
        return chain
    return [sharding(inner_chunks, chain, index_location)]


def sharding(chunk_shape: Sequence[int], codecs: list, index_location: str = "end",
             index_codecs: list | None = None) -> dict:
    """A sharding_indexed codec JSON entry."""
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": codecs,
        "index_codecs": INDEX_CODECS if index_codecs is None else index_codecs,
        "index_location": index_location}}


def load_zarr_json(store: Path) -> dict:
    return json.loads((Path(store) / "zarr.json").read_text())


def env_binary() -> Path:
    return Path(os.environ.get("TESSERA_BIN", DEFAULT_BINARY))


def standard_slices(shape: Sequence[int]) -> list[tuple[str | None, tuple]]:
    """A few fixed indexings worth checking on every array: all, reversed, trimmed, strided with a
    dropped first dimension, and one entry only (trailing dimensions whole)."""
    rank = len(shape)
    cases: list[tuple[str | None, tuple]] = [(None, ())]
    cases.append((",".join(["::-1"] * rank), (slice(None, None, -1),) * rank))
    cases.append((",".join(["1:-1"] * rank), (slice(1, -1),) * rank))
    cases.append((",".join(["-1"] + ["::2"] * (rank - 1)), (-1,) + (slice(None, None, 2),) * (rank - 1)))
    if rank > 1:
        cases.append(("1:", (slice(1, None),)))
    return cases


def check_reads(tessera: Tessera, store: Path, expected: np.ndarray, dtype: str,
                slices: Sequence[tuple[str | None, tuple]] | None = None) -> None:
    """tessera read of STORE equals EXPECTED for the whole array and each slice."""
    for expr, index in (standard_slices(expected.shape) if slices is None else slices):
        want = expected[index]
        got = tessera.read(store, expr, dtype, want.shape)
        assert_identical(got, want, f"tessera read {store.name} --slice {expr!r}")


def random_key(rng, shape):
    """A numpy basic index: per dimension an integer (negative too), a slice with any step, or ':'."""
    key = []
    for n in shape:
        kind = rng.integers(0, 6)
        if kind == 0:
            key.append(int(rng.integers(-n, n)))
        elif kind == 1:
            key.append(slice(None))
        else:
            start, stop = (int(v) for v in rng.integers(-n - 2, n + 2, size=2))
            step = int(rng.integers(1, 5)) * (1 if rng.random() < 0.7 else -1)
            key.append(slice(start, stop, step))
    return tuple(key)
