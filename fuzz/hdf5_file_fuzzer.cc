// A whole HDF5 file: superblock (v0-v3) and its extension, object headers (v1, v2) and every
// message, symbol tables, v1/v2 B-tree nodes, local, fractal and global heaps, attributes, filter
// pipelines and every chunk index (B-tree v1, single chunk, implicit, fixed array, extensible
// array, B-tree v2), then a few reads of every dataset.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz_support.h"
#include "tessera/hdf5/h5_raw_file.h"
#include "tessera/hdf5/h5_reader.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto store = std::make_shared<MemoryStore>();
  (void)store->Set("fuzz.h5", ByteView(data, size));
  auto h5 = hdf5::RawFile::Open(store, "fuzz.h5");
  if (!h5.ok()) return 0;
  auto file = hdf5::Hdf5File::Open(*h5);
  if (!file.ok()) return 0;
  (void)(*file)->RootAttributes();
  auto names = (*file)->ListDatasets();
  if (!names.ok()) return 0;
  int opened = 0;
  for (const std::string& name : *names) {
    if (++opened > 8) break;
    auto dataset = (*file)->OpenDataset(name);
    if (!dataset.ok()) continue;
    (void)(*dataset)->Describe();
    fuzz::ReadSome(**dataset);
  }
  return 0;
}
