"""Sweeps a folder of HDF5 files written by other software and checks that tessera reads every
dataset h5py reads, with the same dtype, shape and values (issue 30).

    .venv/bin/python scripts/hdf5_corpus_check.py FOLDER [--report report.json] [--timeout 60]
                                                   [--selections 4] [--seed 0] [--max-bytes 268435456]

Purpose: a re-runnable sweep over corpora nobody controls (the HDF5 library's own test files,
PyTables' and netCDF4-python's test data, files users send). It downloads nothing: fetch the corpora
yourself into FOLDER (e.g. /tmp/corpus). It is a one-off check, not a test; CI does not run it.

Every file under FOLDER whose signature says HDF5 (h5py.is_hdf5; a user block is allowed) is checked
in its own subprocess with a timeout, so a crash (a signal) or a hang in tessera is caught and
charged to the dataset it was reading. For each dataset (every object h5py's visititems reaches):

  h5py refused   h5py cannot read it (skipped: there is nothing to compare with); hdf5plugin is
                 imported when installed, so h5py reads its filters' datasets
  h5py wrong     h5py's known error (big-endian variable-length sequences left unswapped) and
                 tessera's values equal the corrected ones
  (too large)    more than --max-bytes: compared in --selections small random windows instead
                 (its record says windows_only); "too large" remains only as a class name for
                 reports of earlier versions
  equal          tessera.open(file, dataset=name) gives h5py's dtype, shape and values, read whole
                 and through --selections random numpy selections (slices with steps, negative
                 steps, integers), compared with numpy's indexing of h5py's whole read
  wrong          tessera returned something else (dtype, shape or values; the first difference is
                 reported)
  refused        tessera raised; the error class and the message's first words are kept, and the
                 summary groups refusals by a cause made from the message with numbers, quoted
                 names and paths blanked
  crashed/hung   the subprocess died or ran past --timeout while reading that dataset

Comparison is exact, under tessera's two documented conventions (README's HDF5 table): values come
in native byte order (h5py keeps the file's, so h5py's dtype is taken in native order before the
dtypes are compared with numpy's ==, which ignores h5py's enum/string metadata), and
variable-length strings come as `str` (h5py's plain read gives their UTF-8 bytes: bytes from h5py
are decoded before comparing with a `str` from tessera), object references as the referenced
object's path (h5py's f[ref].name, "" for a null reference). NaNs equal NaNs in the same place; object
arrays are compared element by element (bytes, str, or nested arrays for sequences).

Prints a summary table by class and by refusal cause; --report writes every dataset's record as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

CLASSES = ("equal", "wrong", "refused", "crashed", "hung", "h5py refused", "h5py wrong", "too large",
           "checker error")


# ----------------------------------------------------------------------------------------------
# The child: checks one file, one JSON line per event on stdout (flushed, so the parent knows which
# dataset a crash happened in).


def _emit(record: dict) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _values_equal(a, b) -> bool:
    """Exact, NaN-aware, elementwise for object arrays and structured dtypes."""
    import numpy as np

    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        a = a.astype(a.dtype.newbyteorder("="))  # h5py keeps the file's byte order; tessera gives native
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind == "O":
            return all(_values_equal(x, y) for x, y in zip(a.ravel(), b.ravel()))
        if a.dtype.fields is not None:
            return all(_values_equal(a[name], b[name]) for name in a.dtype.names)
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        if a.dtype.kind == "V":  # opaque: compare the bytes
            return a.tobytes() == b.tobytes()
        return bool(np.array_equal(a, b))
    if isinstance(a, bytes) and isinstance(b, str):  # a variable-length string: h5py's UTF-8 bytes
        return a.decode("utf-8", "surrogateescape") == b
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and a != a:
        return b != b
    return bool(a == b)


def _first_difference(expected, got) -> str:
    import numpy as np

    if expected.dtype.newbyteorder("=") != got.dtype:
        return f"dtype h5py {expected.dtype!r} vs tessera {got.dtype!r}"
    if expected.shape != got.shape:
        return f"shape h5py {expected.shape} vs tessera {got.shape}"
    flat_e, flat_g = expected.reshape(-1), got.reshape(-1)
    for i in range(flat_e.size):
        if not _values_equal(flat_e[i:i + 1], flat_g[i:i + 1]):
            where = np.unravel_index(i, expected.shape) if expected.shape else ()
            return f"at {tuple(int(k) for k in where)}: h5py {flat_e[i]!r} vs tessera {flat_g[i]!r}"
    return "values differ"


def _random_selection(shape, rng):
    """A numpy index tessera supports: per dimension an int, a slice with a step (maybe negative)."""
    index = []
    for n in shape:
        kind = rng.integers(0, 4) if n > 0 else 3
        if kind == 0:
            index.append(int(rng.integers(-n, n)))
        elif kind == 1:
            a, b = sorted(int(v) for v in rng.integers(0, n + 1, size=2))
            index.append(slice(a, b, int(rng.integers(1, 4))))
        elif kind == 2:
            a, b = sorted(int(v) for v in rng.integers(0, n + 1, size=2))
            index.append(slice(b, a if a > 0 else None, -int(rng.integers(1, 4))))
        else:
            index.append(slice(None))
    return tuple(index)


def _unswapped_sequences(expected, got) -> bool:
    """h5py 3 returns a big-endian variable-length sequence's values with a native dtype but the
    file's bytes (README's HDF5 table): tessera's values equal h5py's byte-swapped ones."""
    import numpy as np

    if expected.dtype.kind != "O" or expected.shape != got.shape:
        return False
    pairs = list(zip(expected.ravel(), got.ravel()))
    return all(isinstance(e, np.ndarray) for e, _ in pairs) and \
        all(_values_equal(e.byteswap(), g) for e, g in pairs)


def _as_array(value, dtype):
    """An element picked by integer indices as a 0-d array (an object element kept whole)."""
    import numpy as np

    if isinstance(value, np.ndarray) and (dtype.kind != "O" or value.dtype.kind == "O"):
        return value
    out = np.empty((), dtype=dtype)
    out[()] = value
    return out


def _describe_error(exc: BaseException) -> dict:
    message = str(exc).replace("\n", " ")
    return {"error": type(exc).__name__, "message": message[:400]}


def _referenced_paths(f, references):
    """Object references as tessera gives them (README's HDF5 table): the referenced object's path,
    what h5py's f[ref].name gives, "" for a null reference or an object no group links to."""
    import numpy as np

    out = np.empty(references.shape, dtype=object)
    for i, ref in np.ndenumerate(references):
        out[i] = (f[ref].name or "") if ref else ""
    return out


def _check_windows(path: str, name: str, h5ds, rng, windows: int, record: dict) -> dict:
    """A dataset too large to read whole (the library's tests hold sparse ones of 2^33 elements):
    small random windows, at most 16 elements a dimension, read by both."""
    import numpy as np

    import tessera

    record = {**record, "windows_only": True}
    for _ in range(max(windows, 1)):
        index = []
        for n in h5ds.shape:
            start = int(rng.integers(0, n)) if n else 0
            index.append(slice(start, min(n, start + int(rng.integers(1, 17)))))
        index = tuple(index)
        try:
            expected = _as_array(h5ds[index], h5ds.dtype)
        except Exception as exc:  # noqa: BLE001
            return {**record, "class": "h5py refused", "selection": repr(index), **_describe_error(exc)}
        try:
            got = _as_array(tessera.open(path, dataset="/" + name)[index], expected.dtype)
        except Exception as exc:  # noqa: BLE001
            return {**record, "class": "refused", "selection": repr(index), **_describe_error(exc)}
        if not _values_equal(expected, got):
            return {**record, "class": "wrong", "selection": repr(index), "difference": _first_difference(expected, got)}
    return {**record, "class": "equal"}


def _check_dataset(path: str, name: str, h5ds, rng, selections: int, max_bytes: int) -> dict:
    import h5py
    import numpy as np

    import tessera

    record = {"file": path, "dataset": name}
    try:
        record["h5py_dtype"] = str(h5ds.dtype)
        record["shape"] = list(h5ds.shape) if h5ds.shape is not None else None
        if h5ds.shape is None:  # a null dataspace: h5py gives an Empty, nothing to compare
            return {**record, "class": "h5py refused", "message": "null dataspace"}
        if h5ds.size * max(h5ds.dtype.itemsize, 1) > max_bytes:
            return _check_windows(path, name, h5ds, rng, selections, record)
        # A scalar dataset: h5py returns the element itself (a numpy scalar, bytes, a sequence's array).
        expected = _as_array(h5ds[()], h5ds.dtype)
        if h5py.check_ref_dtype(h5ds.dtype) is h5py.Reference:
            expected = _referenced_paths(h5ds.file, expected)
    except Exception as exc:  # noqa: BLE001  (anything h5py refuses is skipped, whatever it raises)
        return {**record, "class": "h5py refused", **_describe_error(exc)}
    try:
        array = tessera.open(path, dataset="/" + name)
        got = np.asarray(array[...])
    except Exception as exc:  # noqa: BLE001
        return {**record, "class": "refused", **_describe_error(exc)}
    if not _values_equal(expected, got):
        if _unswapped_sequences(expected, got):
            return {**record, "class": "h5py wrong",
                    "difference": "h5py leaves big-endian sequence values unswapped; tessera's equal them swapped"}
        return {**record, "class": "wrong", "difference": _first_difference(expected, got)}
    for _ in range(selections if h5ds.ndim else 0):
        index = _random_selection(h5ds.shape, rng)  # the dataset's dimensions (an array type's are not indexable)
        want = _as_array(expected[index], expected.dtype)
        try:
            part = _as_array(array[index], array.dtype)
        except Exception as exc:  # noqa: BLE001
            return {**record, "class": "refused", "selection": repr(index), **_describe_error(exc)}
        if not _values_equal(want, part):
            return {**record, "class": "wrong", "selection": repr(index),
                    "difference": _first_difference(want, part)}
    return {**record, "class": "equal"}


def _child(path: str, selections: int, seed: int, max_bytes: int) -> None:
    import h5py
    import numpy as np

    try:  # hdf5plugin's filters (blosc, blosc2, bzip2, ...) let h5py read what their files hold
        import hdf5plugin  # noqa: F401
    except ImportError:
        pass
    rng = np.random.default_rng(seed)
    try:
        f = h5py.File(path, "r")
    except Exception as exc:  # noqa: BLE001
        _emit({"file": path, "event": "h5py cannot open", **_describe_error(exc)})
        return
    names = []
    try:
        f.visititems(lambda n, obj: names.append(n) if isinstance(obj, h5py.Dataset) else None)
    except Exception as exc:  # noqa: BLE001  (a broken link or group: keep what was reached)
        _emit({"file": path, "event": "h5py visit stopped", **_describe_error(exc)})
    for name in names:
        _emit({"file": path, "dataset": name, "event": "start"})
        try:
            h5ds = f[name]
        except Exception as exc:  # noqa: BLE001
            _emit({"file": path, "dataset": name, "class": "h5py refused", **_describe_error(exc)})
            continue
        try:
            _emit(_check_dataset(path, name, h5ds, rng, selections, max_bytes))
        except Exception as exc:  # noqa: BLE001  (the checker's own failure, not tessera's)
            _emit({"file": path, "dataset": name, "class": "checker error", **_describe_error(exc)})


# ----------------------------------------------------------------------------------------------
# The parent: finds files, runs a child per file, classifies and summarises.


def _hdf5_files(folder: Path):
    import h5py

    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            try:
                if h5py.is_hdf5(str(p)):
                    yield p
            except Exception:  # noqa: BLE001
                continue


def _run_file(path: Path, args) -> tuple[list[dict], list[dict]]:
    """The records of one file's datasets, and file-level events (h5py could not open it, ...)."""
    command = [sys.executable, os.path.abspath(__file__), "--child", str(path), "--selections",
               str(args.selections), "--seed", str(args.seed), "--max-bytes", str(args.max_bytes)]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        out, returncode, hung = done.stdout, done.returncode, False
        stderr = done.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        returncode, hung, stderr = None, True, ""
    records, events, current = [], [], None
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if r.get("event") == "start":
            current = r
        elif "class" in r:
            records.append(r)
            current = None
        else:
            events.append(r)
    if current is not None or hung or returncode:
        how = "hung" if hung else "crashed"
        detail = {"hung": f"no result within {args.timeout} s"} if hung else \
            {"returncode": returncode, "stderr_tail": stderr[-400:]}
        if current is not None:
            records.append({"file": str(path), "dataset": current["dataset"], "class": how, **detail})
        else:
            events.append({"file": str(path), "event": f"child {how} outside a dataset", **detail})
    for r in records:
        r["file"] = str(path)
    events.append({"file": str(path), "event": "seconds", "seconds": round(time.monotonic() - started, 2)})
    return records, events


def refusal_cause(record: dict) -> str:
    """The message with what varies between datasets blanked: numbers, quoted names, paths."""
    message = record.get("message", "")
    message = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", message)
    message = re.sub(r"(/[\w.+\-]+)+", "/…", message)
    message = re.sub(r"0x[0-9a-fA-F]+|\d+", "N", message)
    return f"{record.get('error', '?')}: {message[:140]}"


def _summarise(corpus_records: dict[str, list[dict]]) -> str:
    lines = ["| corpus | files | datasets | h5py reads | equal | wrong | refused | crashed | hung | h5py wrong |"
             " too large | checker error |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for corpus, records in corpus_records.items():
        counts = Counter(r["class"] for r in records)
        files = len({r["file"] for r in records})
        reads = sum(counts[c] for c in ("equal", "wrong", "refused", "crashed", "hung", "h5py wrong"))
        lines.append(f"| {corpus} | {files} | {len(records)} | {reads} | {counts['equal']} | {counts['wrong']} | "
                     f"{counts['refused']} | {counts['crashed']} | {counts['hung']} | {counts['h5py wrong']} | "
                     f"{counts['too large']} | {counts['checker error']} |")
    all_records = [r for rs in corpus_records.values() for r in rs]
    causes = Counter(refusal_cause(r) for r in all_records if r["class"] == "refused")
    if causes:
        lines += ["", "| refusal cause | datasets |", "|---|---:|"]
        lines += [f"| {cause} | {n} |" for cause, n in causes.most_common()]
    bad = [r for r in all_records if r["class"] in ("wrong", "crashed", "hung", "h5py wrong", "checker error")]
    if bad:
        lines += ["", "wrong / crashed / hung:"]
        lines += [f"  {r['class']}: {r['file']} :: {r['dataset']}: "
                  f"{r.get('difference') or r.get('hung') or r.get('message') or r.get('stderr_tail', '')[-200:]}"
                  f"{' selection ' + r['selection'] if 'selection' in r else ''}" for r in bad]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--report", type=Path, help="write every dataset's record here as JSON")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per file")
    parser.add_argument("--selections", type=int, default=4, help="random selections per dataset")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-bytes", type=int, default=256 << 20, help="skip datasets larger than this")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.selections, args.seed, args.max_bytes)
        return 0
    if args.folder is None or not args.folder.is_dir():
        parser.error("FOLDER: a directory holding HDF5 files")
    # A corpus is each top-level folder under FOLDER (or FOLDER itself when files sit directly in it).
    corpus_records: dict[str, list[dict]] = {}
    events: list[dict] = []
    for path in _hdf5_files(args.folder):
        relative = path.relative_to(args.folder)
        corpus = relative.parts[0] if len(relative.parts) > 1 else args.folder.name
        records, file_events = _run_file(path, args)
        corpus_records.setdefault(corpus, []).extend(records)
        events.extend(file_events)
        for r in records:
            if r["class"] in ("wrong", "crashed", "hung"):
                print(f"{r['class']}: {path} :: {r['dataset']}", file=sys.stderr, flush=True)
    print(_summarise(corpus_records))
    if args.report:
        args.report.write_text(json.dumps({"records": [r for rs in corpus_records.values() for r in rs],
                                           "events": events}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
