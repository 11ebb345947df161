// Which other files an HDF5 dataset may pull in. Virtual datasets (source files) and external
// storage (raw data files) name files by path; a hostile file could name /etc/passwd or another
// user's data. By default only files inside the directory tree of the HDF5 file that names them
// are followed: the name is resolved (relative names against that file's directory, as HDF5 does
// for VDS sources and with the "${ORIGIN}" external-file prefix), `..` and symlinks followed, and
// the real path must lie inside the real path of that directory. The caller widens this with
// explicit allowed paths (directories or files).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/status.h"

namespace tessera::hdf5 {

struct LinkedFilePolicy {
  // Directories (and files) the caller allows beyond the referring file's own directory tree.
  std::vector<std::string> allowed_paths;
  // How many virtual datasets deep this read is (a VDS whose source is a VDS ...): bounded so a
  // mapping cycle ends in an error.
  int depth = 0;
  // The virtual datasets being opened along this chain ("file: dataset /v"), so that a mapping
  // back onto one of them (a cycle) is refused instead of recursing.
  std::vector<std::string> virtual_chain;
};
inline constexpr int kMaxLinkedFileDepth = 8;

// The real path of the file `name` that the local file `referrer` names, when the policy allows it.
// kFailedPrecondition naming `what`, `name` and what it resolves to when it lies outside the
// referrer's directory tree and every allowed path; kInvalidArgument for an empty name.
Result<std::string> ResolveLinkedFile(const std::string& referrer, std::string_view name, const LinkedFilePolicy& policy,
                                      std::string_view what);

// For files on an object store: the key of `name` relative to the referring key's prefix ("a/b/f.h5"
// naming "s.h5" -> "a/b/s.h5"). Absolute names and names that climb out of the prefix with `..`
// are refused (kFailedPrecondition): on a store only the file's own prefix is followed.
Result<std::string> ResolveLinkedKey(const std::string& referrer_key, std::string_view name, std::string_view what);

}  // namespace tessera::hdf5
