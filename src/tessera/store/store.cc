#include "tessera/store/store.h"

namespace tessera {

Status WritableStore::CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> value, source.Get(source_key));
  if (!value) return NotFound(source.Describe(source_key) + ": no such value to copy");
  return Set(key, *value);
}

}  // namespace tessera
