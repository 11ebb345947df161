// Hand-made HDF5 variable-length data for the vlen tests and the vlen fuzzer (test-only; not part
// of the library): a global heap collection's bytes, and the datatypes that hold vlen values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_vlen.h"

namespace tessera::hdf5_test {

inline void PutLE(Bytes* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A global heap collection (placed at address 0 by the tests) holding `objects` as indices 1, 2, ...
inline Bytes Collection(const std::vector<std::string>& objects) {
  Bytes body;
  for (size_t i = 0; i < objects.size(); ++i) {
    PutLE(&body, i + 1, 2);  // index
    PutLE(&body, 1, 2);      // reference count
    PutLE(&body, 0, 4);      // reserved
    PutLE(&body, objects[i].size(), 8);
    body.insert(body.end(), objects[i].begin(), objects[i].end());
    while (body.size() % 8) body.push_back(0);
  }
  Bytes out = {'G', 'C', 'O', 'L', 1, 0, 0, 0};
  PutLE(&out, 16 + body.size() + 16, 8);  // the header, the objects and a free-space object
  out.insert(out.end(), body.begin(), body.end());
  PutLE(&out, 0, 8);   // free space: index 0 ...
  PutLE(&out, 16, 8);  // ... and its size
  return out;
}

// A signed integer of `size` bytes, every bit significant.
inline hdf5::H5Type Integer(uint32_t size, bool big_endian) {
  hdf5::H5Type t;
  t.cls = hdf5::H5TypeClass::kFixedPoint;
  t.size = size;
  t.is_signed = true;
  t.big_endian = big_endian;
  t.precision = static_cast<uint16_t>(8 * size);
  return t;
}

// A variable-length UTF-8 string (h5py.string_dtype()).
inline hdf5::H5Type VlenString() {
  hdf5::H5Type t;
  t.cls = hdf5::H5TypeClass::kVariableLength;
  t.size = hdf5::kVlenReferenceBytes;
  t.vlen_string = true;
  t.charset = 1;
  return t;
}

// A variable-length sequence of `base` (h5py.vlen_dtype).
inline hdf5::H5Type VlenOf(hdf5::H5Type base) {
  hdf5::H5Type t;
  t.cls = hdf5::H5TypeClass::kVariableLength;
  t.size = hdf5::kVlenReferenceBytes;
  t.base.push_back(std::move(base));
  return t;
}

// A one-dimensional array datatype of `n` `base` elements.
inline hdf5::H5Type ArrayOf(hdf5::H5Type base, uint32_t n) {
  hdf5::H5Type t;
  t.cls = hdf5::H5TypeClass::kArray;
  t.size = base.size * n;
  t.array_dims = {n};
  t.base.push_back(std::move(base));
  return t;
}

}  // namespace tessera::hdf5_test
