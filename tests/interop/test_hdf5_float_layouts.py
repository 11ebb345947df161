"""tessera reads floats in any layout an HDF5 datatype message describes (VAX order, other
exponent and mantissa fields and biases, a stored leading one, padding bits) as the float of the
element's size, correctly rounded. h5py cannot write these layouts (nor give a dtype for VAX
order), so each file is an h5py-written file whose datatype message is patched; the HDF5 library
then converts the same bytes for the comparison: read through h5py's low-level API into a float
wide enough to hold every value exactly, rounded by numpy (to nearest, ties to even) to the
element's size. h5dump's printout of a VAX file agrees too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zlib

import h5py
import numpy as np
import pytest
from h5py import h5s

import tessera

# The datatype message h5py writes for "<f2", "<f4" and "<f8" (version 1, little-endian IEEE).
IEEE_MESSAGE = {
    2: bytes([0x11, 0x20, 0x0F, 0x00, 2, 0, 0, 0, 0, 0, 16, 0, 10, 5, 0, 10, 15, 0, 0, 0]),
    4: bytes([0x11, 0x20, 0x1F, 0x00, 4, 0, 0, 0, 0, 0, 32, 0, 23, 8, 0, 23, 127, 0, 0, 0]),
    8: bytes([0x11, 0x20, 0x3F, 0x00, 8, 0, 0, 0, 0, 0, 64, 0, 52, 11, 0, 52, 0xFF, 3, 0, 0]),
}


def layout_message(size, *, order="le", sign, exponent, mantissa, bias, norm=2, offset=0, precision=None):
    """A version-3 floating-point datatype message: exponent and mantissa are (location, bits)."""
    order_bits = {"le": 0x00, "be": 0x01, "vax": 0x41}[order]
    bits = order_bits | (norm << 4) | (sign << 8)
    precision = size * 8 if precision is None else precision
    return (
        bytes([0x31, bits & 0xFF, bits >> 8, 0])
        + size.to_bytes(4, "little")
        + offset.to_bytes(2, "little")
        + precision.to_bytes(2, "little")
        + bytes([exponent[0], exponent[1], mantissa[0], mantissa[1]])
        + bias.to_bytes(4, "little")
    )


def vax_bytes(words_le: np.ndarray) -> bytes:
    """Each element's little-endian bytes with the order of its 2-byte words reversed (VAX)."""
    size = words_le.dtype.itemsize
    b = words_le.astype(f"<u{size}").view(np.uint8).reshape(-1, size // 2, 2)
    return b[:, ::-1, :].tobytes()


def patched_file(path, raw: bytes, size, message, shape, chunks=None):
    """An h5py file of `raw` as dataset "x" (float of `size`) whose datatype message is `message`."""
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.frombuffer(raw, f"<f{size}").reshape(shape), chunks=chunks)
    b = bytearray(path.read_bytes())
    at = b.find(IEEE_MESSAGE[size])
    assert at >= 0 and b.find(IEEE_MESSAGE[size], at + 1) < 0
    b[at : at + len(message)] = message
    path.write_bytes(bytes(b))


def hdf5_values(path, wide):
    """The HDF5 library's conversion of dataset "x" into numpy dtype `wide` (exact for these files)."""
    with h5py.File(path, "r") as f:
        d = f["x"]
        out = np.empty(d.shape, wide)
        d.id.read(h5s.ALL, h5s.ALL, out)
    return out


def assert_same_floats(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    both_nan = np.isnan(got) & np.isnan(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~both_nan], want[~both_nan])
    assert np.array_equal(np.signbit(got[~both_nan]), np.signbit(want[~both_nan]))  # signed zeros


def random_bits(rng, size, n, exponent, special=()):
    """`n` random elements of `size` bytes, a third with the exponent field at its extremes."""
    bits = rng.integers(0, 2 ** (size * 8), size=n, dtype=np.uint64 if size == 8 else np.uint32)
    loc, width = exponent
    field = ((1 << width) - 1) << loc
    typ = bits.dtype.type
    low = rng.integers(0, 3, size=n // 3)
    high = (1 << width) - 1 - rng.integers(0, 3, size=n - n // 3 - n // 3)
    bits[: n // 3] = (bits[: n // 3] & typ(~field & (2 ** (size * 8) - 1))) | (low.astype(bits.dtype) << typ(loc))
    bits[n // 3 : n // 3 + len(high)] = (bits[n // 3 : n // 3 + len(high)] & typ(~field & (2 ** (size * 8) - 1))) | (
        high.astype(bits.dtype) << typ(loc)
    )
    return np.concatenate([bits, np.array(special, bits.dtype)])


# name: (size, layout fields, numpy float wide enough to hold every value exactly)
LAYOUTS = {
    "vax_f": (4, dict(order="vax", sign=31, exponent=(23, 8), mantissa=(0, 23), bias=129), np.float64),
    "vax_d": (8, dict(order="vax", sign=63, exponent=(55, 8), mantissa=(0, 55), bias=129), np.longdouble),
    "vax_g": (8, dict(order="vax", sign=63, exponent=(52, 11), mantissa=(0, 52), bias=1025), np.longdouble),
    "le_bias_129": (4, dict(sign=31, exponent=(23, 8), mantissa=(0, 23), bias=129), np.float64),
    "be_wide_exponent": (4, dict(order="be", sign=31, exponent=(21, 10), mantissa=(0, 21), bias=511), np.float64),
    "padded_24_bits": (
        4,
        dict(sign=31, exponent=(24, 7), mantissa=(8, 16), bias=63, offset=8, precision=24),
        np.float64,
    ),
    "bfloat16_like_in_2_bytes": (2, dict(order="be", sign=15, exponent=(7, 8), mantissa=(0, 7), bias=127), np.float64),
    "sign_low": (4, dict(sign=0, exponent=(1, 8), mantissa=(9, 23), bias=127), np.float64),
}


@pytest.mark.parametrize("chunks", [None, (50,)], ids=["contiguous", "chunked"])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_float_layout_matches_hdf5_conversion(tmp_path, name, chunks):
    size, fields, wide = LAYOUTS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    exponent = fields["exponent"]
    bits = random_bits(rng, size, 300, exponent, special=[0, 1 << (size * 8 - 1)])
    raw = vax_bytes(bits) if fields.get("order") == "vax" else (
        bits.astype(f">u{size}").tobytes() if fields.get("order") == "be" else bits.astype(f"<u{size}").tobytes()
    )
    path = tmp_path / f"{name}.h5"
    patched_file(path, raw, size, layout_message(size, **fields), (len(bits),), chunks)
    with np.errstate(over="ignore"):  # values past the element's float become infinity
        want = hdf5_values(path, wide).astype(f"<f{size}")
    a = tessera.open(str(path), dataset="x")
    assert a.dtype == np.dtype(f"<f{size}")
    assert_same_floats(a[...], want)
    sel = slice(7, 250, 3)
    assert_same_floats(a[sel], want[sel])


def test_stored_leading_one_matches_hdf5_for_nonzero_exponents(tmp_path):
    # Normalization 0 (leading one stored, as x87's). HDF5 reads an exponent of 0 there as half
    # the value of an exponent of 1 (tessera reads both at the scale of 1, as x87 does), so the
    # comparison keeps to exponents > 0.
    fields = dict(sign=31, exponent=(24, 7), mantissa=(0, 24), bias=63, norm=0)
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, size=400, dtype=np.uint32)
    bits = bits[((bits >> 24) & 0x7F) != 0]
    path = tmp_path / "norm_none.h5"
    patched_file(path, bits.astype("<u4").tobytes(), 4, layout_message(4, **fields), (len(bits),))
    want = hdf5_values(path, np.float64).astype("<f4")
    assert_same_floats(tessera.open(str(path), dataset="x")[...], want)


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump (Debian's hdf5-tools) not installed")
def test_vax_f_agrees_with_h5dump(tmp_path, run_tessera):
    # 1, 0.5, -3, +0, -0, exponent-0 subnormal, 2^-128, (2^24-1)*2^-150 (rounds to 2^-126), inf, NaN.
    words = np.array(
        [129 << 23, 128 << 23, (1 << 31) | (130 << 23) | 0x400000, 0, 1 << 31, 5, 1 << 23,
         (2 << 23) | 0x7FFFFF, 255 << 23, (255 << 23) | 1],
        np.uint32,
    )
    path = tmp_path / "vax.h5"
    fields = LAYOUTS["vax_f"][1]
    patched_file(path, vax_bytes(words), 4, layout_message(4, **fields), (len(words),))
    out = subprocess.run(["h5dump", "-d", "x", str(path)], capture_output=True, text=True, check=True).stdout
    assert "H5T_VAX_F32" in out
    data = out.split("DATA {", 1)[1].split("}", 1)[0]
    printed = [float(tok.split(":")[-1]) for tok in data.replace("\n", " ").split(",")]
    got = tessera.open(str(path), dataset="x")[...]
    assert got.dtype == np.float32
    # h5dump prints 6 significant digits of the float32 HDF5 converts to. Element 7 is the
    # exception: (2^24 - 1) * 2^-150 rounds up to float32's smallest normal, 2^-126, and HDF5's
    # direct conversion to float32 prints 2^-127 there (the carry out of its subnormal rounding
    # is lost); HDF5's exact conversion to float64, rounded, gives 2^-126 (the test above).
    printed = np.array(printed, np.float32)
    assert printed[7] == pytest.approx(2.0**-127, rel=1e-5)
    keep = np.arange(len(words)) != 7
    np.testing.assert_allclose(got[keep], printed[keep], rtol=1e-5, atol=0)
    assert list(got[:3]) == [1.0, 0.5, -3.0]
    assert got[6] == np.float32(2.0**-128) and got[7] == np.float32(2.0**-126)
    assert np.isposinf(got[8]) and np.isnan(got[9])
    # `tessera info` names the order as h5dump does (VAX), not as the big-endian bit alone would.
    listing = run_tessera(["info", path])
    assert listing.returncode == 0 and "VAX byte order" in listing.stdout.decode(), listing
    described = run_tessera(["info", path, "--dataset", "x", "--json"])
    assert described.returncode == 0 and json.loads(described.stdout)["byte_order"] == "VAX", described

