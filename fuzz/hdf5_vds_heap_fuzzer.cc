// The decoders behind HDF5 virtual datasets and variable-length data, on their own: a global heap
// collection (GCOL) and the virtual dataset mapping list (with the selections it encodes). The input:
//
//   byte 0      0: the rest is a global heap collection at address 0 of a file; its objects 0..31
//               are looked up (directly and through the per-file cache)
//               1: the rest is a VDS mapping list (a global heap object's bytes)
//               2: the rest is one encoded selection
//
// Invariants: a failure is corrupt data or unsupported and names what was decoded; a collection's
// objects lie inside it; decoded selections have counts and blocks of at least 1.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "tessera/hdf5/h5_global_heap.h"
#include "tessera/hdf5/h5_selection_encoding.h"
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
  switch (data[0] % 3) {
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
