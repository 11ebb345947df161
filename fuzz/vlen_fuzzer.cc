// Variable-length data decoders over garbage: the Zarr vlen-utf8 / vlen-bytes chunk layout
// (zarr/vlen_chunk.h) and the resolution of HDF5 variable-length references through a file's
// global heap (hdf5/h5_vlen.h). The input:
//
//   byte 0   even: a Zarr chunk; odd: HDF5 references
//   Zarr:    byte 1 = the chunk's element count; the rest = the chunk
//   HDF5:    byte 1 = n (1..16 elements), then n 16-byte references (the chunk as stored),
//            the rest = the file the references point into (global heap collections anywhere)
//
// Invariants: a decoded chunk has one element per position; an HDF5 element's data has exactly
// the length its reference gives; a failure is corrupt data (or, for HDF5, unsupported) and
// names the chunk.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "tessera/hdf5/h5_vlen.h"
#include "tessera/store/memory_store.h"
#include "tessera/zarr/vlen_chunk.h"

using namespace tessera;
using namespace tessera::hdf5;

namespace {

// The references of one chunk of n elements, as the fixed-size reader gives them.
class ReferenceChunk final : public ChunkSource {
 public:
  ReferenceChunk(int64_t n, ByteView refs)
      : shape_{n, static_cast<int64_t>(kVlenReferenceBytes)}, refs_(refs.begin(), refs.end()), fill_{Bytes(1, 0)} {}
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
  if (size - 1 < n * kVlenReferenceBytes) return;
  const ByteView refs(data + 1, n * kVlenReferenceBytes);
  const ByteView file_bytes(data + 1 + refs.size(), size - 1 - refs.size());
  auto store = std::make_shared<MemoryStore>();
  (void)store->Set("fuzz.h5", file_bytes);
  Result<std::shared_ptr<RawFile>> file = RawFile::Open(store, "fuzz.h5");
  if (!file.ok()) return;
  H5Type type;
  type.cls = H5TypeClass::kVariableLength;
  type.size = kVlenReferenceBytes;
  type.vlen_string = true;
  type.charset = 1;
  const std::string where = "fuzz.h5: dataset /v";
  Result<std::unique_ptr<VlenElements>> elements =
      VlenElements::Make(std::make_shared<ReferenceChunk>(n, refs), *file, type, where);
  FUZZ_CHECK(elements.ok(), "a string type with 16-byte references is read");
  std::vector<std::string> out;
  const int64_t coords[1] = {0};
  Result<bool> read = (*elements)->ReadChunk(coords, &out);
  if (read.ok()) {
    FUZZ_CHECK(*read && out.size() == static_cast<size_t>(n), "one element per position");
    for (int64_t i = 0; i < n; ++i) {
      uint32_t count;
      std::memcpy(&count, refs.data() + i * kVlenReferenceBytes, 4);  // little-endian hosts only
      FUZZ_CHECK(out[i].size() == count, "an element has the length its reference gives");
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
