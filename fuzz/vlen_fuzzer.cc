// Variable-length data decoders over garbage: the Zarr vlen-utf8 / vlen-bytes chunk layout
// (zarr/vlen_chunk.h) and the resolution of HDF5 variable-length references through a file's
// global heap (hdf5/h5_vlen.h). The input:
//
//   byte 0   even: a Zarr chunk; odd: HDF5 references
//   Zarr:    byte 1 = the chunk's element count; the rest = the chunk
//   HDF5:    byte 1 = n (1..16 elements) and, in its high bits, which datatype (a vlen string,
//            a compound {int16 BE, vlen string, int32[2], vlen int32[2] array}, a vlen of vlen
//            int16, a vlen of a compound holding a vlen string); then n elements of the type's
//            size (the chunk as stored), the rest = the file the references point into (global
//            heap collections anywhere)
//
// Invariants: a decoded chunk has one element per position; a top-level string has exactly the
// length its reference gives; every element's encoding parses back whole, as its ObjectType
// says (object_read.h), with nothing left over; a failure is corrupt data (or, for HDF5,
// unsupported) and names the chunk. Seeds: a chunk and elements of each datatype that read
// whole (fuzz/make_seeds.py, vlen_seeds).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "cpp_support/h5_vlen_helpers.h"
#include "fuzz_check.h"
#include "tessera/hdf5/h5_vlen.h"
#include "tessera/read/object_value_encoding.h"
#include "tessera/store/memory_store.h"
#include "tessera/zarr/vlen_chunk.h"

using namespace tessera;
using namespace tessera::hdf5;
using tessera::hdf5_test::ArrayOf;
using tessera::hdf5_test::Integer;
using tessera::hdf5_test::VlenOf;
using tessera::hdf5_test::VlenString;

namespace {

// The stored elements of one chunk of n elements, as the fixed-size reader gives them.
class ReferenceChunk final : public ChunkSource {
 public:
  ReferenceChunk(int64_t n, int64_t element_bytes, ByteView refs)
      : shape_{n, element_bytes}, refs_(refs.begin(), refs.end()), fill_{Bytes(1, 0)} {}
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return shape_; }
  DataType dtype() const override { return DataType::kUInt8; }
  const FillValue& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t>, Bytes* out) const override {
    *out = refs_;
    return true;
  }

 private:
  std::vector<int64_t> shape_;
  Bytes refs_;
  FillValue fill_;
};

// The datatypes the fuzzer reads elements of (see the top).
H5Type FuzzType(int which) {
  switch (which) {
    case 0: return VlenString();
    case 1: {
      H5Type c;
      c.cls = H5TypeClass::kCompound;
      c.members.push_back(H5Member{"n", 0, {Integer(2, true)}});
      c.members.push_back(H5Member{"s", 2, {VlenString()}});
      c.members.push_back(H5Member{"a", 18, {ArrayOf(Integer(4, false), 2)}});
      c.members.push_back(H5Member{"v", 26, {ArrayOf(VlenOf(Integer(4, false)), 2)}});
      c.size = 58;
      return c;
    }
    case 2: return VlenOf(VlenOf(Integer(2, false)));
    default: {
      H5Type c;
      c.cls = H5TypeClass::kCompound;
      c.members.push_back(H5Member{"k", 0, {Integer(1, false)}});
      c.members.push_back(H5Member{"t", 1, {VlenString()}});
      c.size = 17;
      return VlenOf(c);
    }
  }
}

// Whether `bytes` is a whole encoding of a value of `type` (object_read.h).
bool WellFormed(const ObjectType& type, std::string_view bytes, int depth = 0) {
  if (depth > 8) return false;
  ObjectPartReader parts(bytes, "check");
  switch (type.kind) {
    case ObjectKind::kString:
    case ObjectKind::kBytes: return true;
    case ObjectKind::kSequence: {
      if (type.sequence_of.empty() || bytes.empty()) return true;
      Result<uint64_t> count = parts.Count();
      if (!count.ok()) return false;
      for (uint64_t i = 0; i < *count; ++i) {
        Result<std::string_view> part = parts.Part();
        if (!part.ok() || !WellFormed(type.sequence_of.front(), *part, depth + 1)) return false;
      }
      return parts.left() == 0;
    }
    case ObjectKind::kRecord: {
      if (!parts.Raw(type.record_bytes).ok()) return false;
      for (uint32_t t : type.slot_type) {
        Result<std::string_view> part = parts.Part();
        if (!part.ok() || !WellFormed(type.slot_types.at(t), *part, depth + 1)) return false;
      }
      return parts.left() == 0;
    }
  }
  return false;
}

void FuzzZarr(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const std::string where = "fuzz.zarr/c/0";
  Result<std::vector<std::string>> decoded = zarr::DecodeVlenChunk(ByteView(data + 1, size - 1), data[0], where);
  if (decoded.ok()) {
    FUZZ_CHECK(decoded->size() == data[0], "one element per position");
    return;
  }
  FUZZ_CHECK(decoded.status().kind() == ErrorKind::kCorruptData, "failures are corrupt data");
  FUZZ_CHECK(decoded.status().message().rfind(where, 0) == 0, "a failure names the chunk first");
}

void FuzzHdf5(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const int64_t n = data[0] % 16 + 1;
  const H5Type type = FuzzType((data[0] >> 4) % 4);
  const size_t element_bytes = type.size;
  if (size - 1 < n * element_bytes) return;
  const ByteView refs(data + 1, n * element_bytes);
  const ByteView file_bytes(data + 1 + refs.size(), size - 1 - refs.size());
  auto store = std::make_shared<MemoryStore>();
  (void)store->Set("fuzz.h5", file_bytes);
  Result<std::shared_ptr<RawFile>> file = RawFile::Open(store, "fuzz.h5");
  if (!file.ok()) return;
  const std::string where = "fuzz.h5: dataset /v";
  Result<std::unique_ptr<VlenElements>> elements = VlenElements::Make(
      std::make_shared<ReferenceChunk>(n, static_cast<int64_t>(element_bytes), refs), *file, type, where);
  FUZZ_CHECK(elements.ok(), "the fuzzed types are read");
  std::vector<std::string> out;
  const int64_t coords[1] = {0};
  Result<bool> read = (*elements)->ReadChunk(coords, &out);
  if (read.ok()) {
    FUZZ_CHECK(*read && out.size() == static_cast<size_t>(n), "one element per position");
    for (int64_t i = 0; i < n; ++i) {
      FUZZ_CHECK(WellFormed((*elements)->object_type(), out[i]), "an element's encoding parses back whole");
      if (type.cls != H5TypeClass::kVariableLength || !type.vlen_string) continue;
      uint32_t count;
      std::memcpy(&count, refs.data() + i * element_bytes, 4);  // little-endian hosts only
      FUZZ_CHECK(out[i].size() == count, "a string has the length its reference gives");
    }
    return;
  }
  FUZZ_CHECK(read.status().kind() == ErrorKind::kCorruptData || read.status().kind() == ErrorKind::kUnsupported ||
                 read.status().kind() == ErrorKind::kOutOfRange,
             "failures are corrupt data");
  FUZZ_CHECK(read.status().message().find(where) != std::string::npos, "a failure names the dataset");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] % 2 == 0) {
    FuzzZarr(data + 1, size - 1);
  } else {
    FuzzHdf5(data + 1, size - 1);
  }
  return 0;
}
