#include "tessera/store/store.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tessera {

Status WritableStore::SetFromFile(const std::string& key, const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return IoError(path + ": cannot open: " + std::strerror(errno));
  Bytes data(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size())))
    return IoError(path + ": read failed");
  return Set(key, data);
}

}  // namespace tessera
