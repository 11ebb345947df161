// The decoders behind HDF5 virtual datasets and variable-length data, on their own: a global heap
// collection (GCOL) and the virtual dataset mapping list (with the selections it encodes). The input:
//
//   byte 0      0: the rest is a global heap collection at address 0 of a file; its objects 0..31
//               are looked up (directly and through the per-file cache)
//               1: the rest is a VDS mapping list (a global heap object's bytes)
//               2: the rest is one encoded selection
//               3: byte 1 is a rank r (1-3), the next r bytes an extent (each 1-16), the rest one
//                  encoded selection, put in HDF5's element order over that extent
//               4: bytes 1-2 pick a source and destination numeric type, the rest are elements
//                  converted as HDF5 converts them
//
// Invariants: a failure is corrupt data or unsupported and names what was decoded; a collection's
// objects lie inside it; decoded selections have counts and blocks of at least 1; an ordered
// selection's elements lie inside the extent, its k-th element found directly is the one its box
// walk reaches at k, and the walk over the whole extent visits each element once.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "tessera/hdf5/h5_global_heap.h"
#include "tessera/hdf5/h5_numeric_conversion.h"
#include "tessera/hdf5/h5_selection_encoding.h"
#include "tessera/hdf5/h5_selection_order.h"
#include "tessera/hdf5/h5_virtual.h"
#include "tessera/store/memory_store.h"

using namespace tessera;
using namespace tessera::hdf5;

namespace {

void CheckFailure(const Status& st, const std::string& names) {
  FUZZ_CHECK(st.kind() == ErrorKind::kCorruptData || st.kind() == ErrorKind::kUnsupported,
             "failures are corrupt data or unsupported");
  FUZZ_CHECK(st.message().find(names) != std::string::npos, "a failure names what was decoded");
}

void CheckSelection(const DecodedSelection& sel) {
  for (const SelectionDim& d : sel.dims) FUZZ_CHECK(d.count >= 1 && d.block >= 1 && d.stride >= 1, "counts, blocks, strides >= 1");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ByteView rest(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      auto store = std::make_shared<MemoryStore>();
      (void)store->Set("heap.h5", rest);
      auto file = RawFile::Open(store, "heap.h5");
      if (!file.ok()) return 0;
      Result<GlobalHeapCollection> c = ReadGlobalHeapCollection(**file, 0);
      if (!c.ok()) {
        CheckFailure(c.status(), "global heap collection");
        return 0;
      }
      std::shared_ptr<GlobalHeap> heap = GlobalHeap::Of(*file);
      for (uint32_t i = 0; i < 32; ++i) {
        Result<ByteView> object = c->Object(i);
        Result<Bytes> cached = heap->Read({0, i});
        FUZZ_CHECK(object.ok() == cached.ok(), "the cache agrees with the collection");
        if (object.ok()) FUZZ_CHECK(object->size() < c->size_bytes(), "an object lies inside its collection");
      }
      return 0;
    }
    case 1: {
      Result<std::vector<VirtualMapping>> mappings = DecodeVirtualMappings(rest, "fuzz.h5: dataset /v");
      if (!mappings.ok()) {
        CheckFailure(mappings.status(), "fuzz.h5: dataset /v");
        return 0;
      }
      for (const VirtualMapping& m : *mappings) {
        CheckSelection(m.source);
        CheckSelection(m.virtual_selection);
      }
      return 0;
    }
    case 3: {
      if (rest.size() < 1) return 0;
      const size_t rank = 1 + rest[0] % 3;
      if (rest.size() < 1 + rank) return 0;
      std::vector<uint64_t> extent(rank);
      for (size_t d = 0; d < rank; ++d) extent[d] = 1 + rest[1 + d] % 16;
      const ByteView encoded = rest.subspan(1 + rank);
      size_t pos = 0;
      Result<DecodedSelection> sel = DecodeSelection(encoded, &pos, "fuzz selection");
      if (!sel.ok()) {
        CheckFailure(sel.status(), "fuzz selection");
        return 0;
      }
      if (sel->unlimited()) return 0;  // resolved against a source's extent first
      Result<OrderedSelection> order = OrderedSelection::Make(*sel, extent, "fuzz order");
      if (!order.ok()) {
        CheckFailure(order.status(), "fuzz order");
        return 0;
      }
      FUZZ_CHECK(order->rank() == rank, "an ordered selection keeps the rank");
      uint64_t visited = 0;
      std::vector<uint64_t> zero(rank, 0), at(rank);
      order->ForEachRunInBox(zero, extent, [&](uint64_t k, std::span<const uint64_t> coords, uint64_t n) {
        FUZZ_CHECK(n >= 1 && k + n <= order->size(), "runs lie inside the selection");
        for (size_t d = 0; d < rank; ++d) FUZZ_CHECK(coords[d] < extent[d], "runs lie inside the extent");
        FUZZ_CHECK(coords[rank - 1] + n <= extent[rank - 1], "runs end inside the extent");
        const uint64_t run = order->At(k, at);
        FUZZ_CHECK(std::equal(at.begin(), at.end(), coords.begin()), "At(k) agrees with the box walk");
        FUZZ_CHECK(run >= 1, "At gives a run of at least one");
        visited += n;
      });
      FUZZ_CHECK(visited == order->size(), "the walk over the whole extent visits every element once");
      return 0;
    }
    case 4: {
      if (rest.size() < 2) return 0;
      constexpr DataType kTypes[] = {DataType::kInt8,   DataType::kInt16,   DataType::kInt32,   DataType::kInt64,
                                     DataType::kUInt8,  DataType::kUInt16,  DataType::kUInt32,  DataType::kUInt64,
                                     DataType::kFloat16, DataType::kFloat32, DataType::kFloat64};
      const DataType from = kTypes[rest[0] % 11], to = kTypes[rest[1] % 11];
      if (!CanConvertNumeric(from, to)) return 0;
      const size_t n = (rest.size() - 2) / ItemSize(from);
      std::vector<uint8_t> out(n * ItemSize(to) + 1, 0xa5);
      ConvertNumeric(from, rest.data() + 2, to, out.data(), n);
      FUZZ_CHECK(out.back() == 0xa5, "conversion writes n elements only");
      return 0;
    }
    default: {
      size_t pos = 0;
      Result<DecodedSelection> sel = DecodeSelection(rest, &pos, "fuzz selection");
      if (!sel.ok()) {
        CheckFailure(sel.status(), "fuzz selection");
        return 0;
      }
      FUZZ_CHECK(pos <= rest.size(), "the decoder stays inside its input");
      CheckSelection(*sel);
      return 0;
    }
  }
}
