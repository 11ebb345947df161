// HDF5 files that share messages (h5_shared_messages.h): the superblock extension's shared message
// table, the "SMTB" table and its indexes' fractal heaps, and every object header message and
// attribute (compact and dense) that stands for a message in the heap; then the attributes and a
// few reads of every dataset. Seeds: files h5py writes with shared-message indexes of each form
// (fuzz/make_seeds.py, hdf5_sohm_seeds).
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
    (void)(*file)->Attributes(name);
    auto dataset = (*file)->OpenDataset(name);
    if (!dataset.ok()) continue;
    (void)(*dataset)->Describe();
    fuzz::ReadSome(**dataset);
  }
  return 0;
}
