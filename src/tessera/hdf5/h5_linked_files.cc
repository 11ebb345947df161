#include "tessera/hdf5/h5_linked_files.h"

#include <filesystem>
#include <system_error>

namespace tessera::hdf5 {
namespace {

namespace fs = std::filesystem;

// The path with symlinks and `..` resolved as far as it exists (the rest normalized lexically).
fs::path RealPath(const fs::path& p) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal() : real;
}

bool IsInside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

Result<std::string> ResolveLinkedFile(const std::string& referrer, std::string_view name, const LinkedFilePolicy& policy,
                                      std::string_view what) {
  if (name.empty()) return InvalidArgument(std::string(what) + ": the file name is empty");
  const fs::path own_dir = RealPath(fs::path(referrer)).parent_path();
  const fs::path named(name);
  const fs::path resolved = RealPath(named.is_absolute() ? named : own_dir / named);
  if (IsInside(resolved, own_dir)) return resolved.string();
  std::string allowed_text = own_dir.string() + " (the file's own directory)";
  for (const std::string& allowed : policy.allowed_paths) {
    if (allowed.empty()) continue;
    const fs::path root = RealPath(allowed);
    if (IsInside(resolved, root)) return resolved.string();
    allowed_text += ", " + root.string();
  }
  return FailedPrecondition(std::string(what) + ": \"" + std::string(name) + "\" resolves to " + resolved.string() +
                            ", outside the directories linked files may come from (" + allowed_text +
                            "); a file that names other files is followed only into its own directory tree "
                            "unless the path is allowed explicitly (hdf5_allowed_paths)");
}

Result<std::string> ResolveLinkedKey(const std::string& referrer_key, std::string_view name, std::string_view what) {
  if (name.empty()) return InvalidArgument(std::string(what) + ": the file name is empty");
  const fs::path named(name);
  const fs::path prefix = fs::path(referrer_key).parent_path();
  const fs::path joined = (prefix / named).lexically_normal();
  const bool escapes = named.is_absolute() || joined.empty() || *joined.begin() == "..";
  if (escapes || (!prefix.empty() && !IsInside(joined, prefix)))
    return FailedPrecondition(std::string(what) + ": \"" + std::string(name) + "\" is outside the prefix \"" +
                              prefix.string() + "/\" of the file that names it; on an object store only the file's own " +
                              "prefix is followed");
  return joined.string();
}

}  // namespace tessera::hdf5
