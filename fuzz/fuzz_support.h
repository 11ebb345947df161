// Helpers shared by the fuzz targets (fuzz/*.cc): unpacking a fuzz input into a store, reading
// a bounded part of whatever opened, and walking a whole HDF5 file. Each target is a libFuzzer entry point; see fuzz/README.md.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/hdf5/h5_raw_file.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/read/selection_read.h"
#include "tessera/store/memory_store.h"

namespace tessera::fuzz {

// The input of the store targets: files packed one after another as
//   u16 name length, name, u32 data length, data   (little endian)
// as fuzz/make_seeds.py packs them. A length reaching past the input takes what is left, so every
// mutation still gives a store.
inline std::shared_ptr<MemoryStore> UnpackStore(const uint8_t* data, size_t size) {
  auto store = std::make_shared<MemoryStore>();
  size_t pos = 0;
  auto take = [&](size_t n) {
    n = std::min(n, size - pos);
    const uint8_t* p = data + pos;
    pos += n;
    return std::string_view(reinterpret_cast<const char*>(p), n);
  };
  auto number = [&](int bytes) {
    uint64_t v = 0;
    std::string_view b = take(bytes);
    for (size_t i = 0; i < b.size(); ++i) v |= uint64_t{static_cast<uint8_t>(b[i])} << (8 * i);
    return v;
  };
  while (pos < size) {
    const std::string name(take(number(2)));
    const std::string_view value = take(number(4));
    if (name.empty()) continue;
    (void)store->Set(name, ByteView(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
  }
  return store;
}

// Reads a few small selections of `source` (a corner, the opposite corner backwards, a strided
// one) when its chunks are small enough to decode here (the library's own limit is 16 GiB a
// chunk, more than a fuzzer may allocate). Errors are fine; crashes, leaks and undefined
// behaviour are what the sanitizers look for.
inline void ReadSome(const ChunkSource& source) {
  constexpr uint64_t kMaxChunkBytes = 4 << 20;
  constexpr int64_t kMaxElements = 1 << 12;
  const std::vector<int64_t>& shape = source.shape();
  const std::vector<int64_t>& chunk = source.read_chunk_shape();
  uint64_t chunk_bytes = ItemSize(source.dtype());
  for (int64_t c : chunk) {
    if (c <= 0 || chunk_bytes > kMaxChunkBytes / static_cast<uint64_t>(c)) return;
    chunk_bytes *= static_cast<uint64_t>(c);
  }
  for (int64_t e : shape) {
    if (e < 0) return;
  }
  for (int variant = 0; variant < 3; ++variant) {
    Hyperslab sel;
    int64_t elements = 1;
    for (int64_t extent : shape) {
      const int64_t want = std::min<int64_t>(extent, elements * 3 <= kMaxElements ? 3 : 1);
      index::DimSlice d;
      d.count = want;
      if (variant == 1 && extent > 0) {  // the far corner, backwards
        d.start = extent - 1;
        d.step = -1;
      } else if (variant == 2 && want > 1) {  // spread over the whole extent
        d.step = std::max<int64_t>(1, (extent - 1) / (want - 1));
      }
      sel.dims.push_back(d);
      sel.dropped.push_back(false);
      elements *= std::max<int64_t>(want, 1);
    }
    Bytes out(static_cast<size_t>(sel.NumElements()) * ItemSize(source.dtype()));
    ReadOptions options;
    options.threads = 1;
    (void)ReadHyperslab(source, sel, out.data(), options);
  }
}

// Opens the input as an HDF5 file and reads what it can: the root group's attributes, then for
// the first 8 datasets their attributes, description and a few selections (ReadSome). Errors are
// fine, as above.
inline void ReadHdf5File(const uint8_t* data, size_t size) {
  auto store = std::make_shared<MemoryStore>();
  (void)store->Set("fuzz.h5", ByteView(data, size));
  auto h5 = hdf5::RawFile::Open(store, "fuzz.h5");
  if (!h5.ok()) return;
  auto file = hdf5::Hdf5File::Open(*h5);
  if (!file.ok()) return;
  (void)(*file)->RootAttributes();
  auto names = (*file)->ListDatasets();
  if (!names.ok()) return;
  int opened = 0;
  for (const std::string& name : *names) {
    if (++opened > 8) break;
    (void)(*file)->Attributes(name);
    auto dataset = (*file)->OpenDataset(name);
    if (!dataset.ok()) continue;
    (void)(*dataset)->Describe();
    ReadSome(**dataset);
  }
}

}  // namespace tessera::fuzz
