// Groups: the links from a group to its members, from old-style symbol tables (v1 B-tree of
// "SNOD" nodes naming entries in a local "HEAP"), new-style compact groups (Link messages in the
// header) and dense groups (link messages in a fractal heap, found through a v2 B-tree name index).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hdf5/h5_object_header.h"

namespace tessera::hdf5 {

// A local heap ("HEAP", version 0): the names of a symbol-table group's links, or of a dataset's
// external raw data files.
struct LocalHeap {
  uint64_t data_addr = 0;
  Bytes data;
};
// Reads the local heap at `addr`; `what` names it in errors ("local heap of external file names").
Result<LocalHeap> ReadLocalHeap(const RawFile& file, uint64_t addr, const std::string& what = "local heap");
// The NUL-terminated string at `offset` of `heap`'s data (kCorrupt, naming the heap, when outside it).
Result<std::string> HeapString(const RawFile& file, const LocalHeap& heap, uint64_t offset);

struct GroupLink {
  std::string name;
  bool hard = true;                      // soft and external links carry no address
  uint64_t object = kUndefinedAddress;   // the member's object header
};

bool IsGroup(const ObjectHeader& oh);
bool IsDataset(const ObjectHeader& oh);

// Bounds of a walk of the group hierarchy (HDF5 allows cycles through hard links; a walk visits
// each object once): groups nested deeper, or more objects, are refused as corrupt.
inline constexpr int kMaxGroupDepth = 64;
inline constexpr size_t kMaxGroupObjects = size_t{1} << 20;

// The path of `name`, a link of the group at `parent` ("/" + name under the root).
std::string JoinGroupPath(const std::string& parent, const std::string& name);

// The links of the group whose header is `oh`; `group_path` names it in errors.
Result<std::vector<GroupLink>> ReadGroupLinks(const RawFile& file, const ObjectHeader& oh,
                                              const std::string& group_path);

}  // namespace tessera::hdf5
