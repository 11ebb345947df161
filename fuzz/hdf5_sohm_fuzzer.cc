// HDF5 files that share messages (h5_shared_messages.h): the superblock extension's shared message
// table, the "SMTB" table and its indexes' fractal heaps, and every object header message and
// attribute (compact and dense) that stands for a message in the heap; then the attributes and a
// few reads of every dataset. Seeds: files h5py writes with shared-message indexes of each form
// (fuzz/make_seeds.py, hdf5_sohm_seeds).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::fuzz::ReadHdf5File(data, size);
  return 0;
}
