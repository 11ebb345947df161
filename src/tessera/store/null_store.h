// A store that discards every write: the "discard" sink for benchmarks that measure the pipeline
// without the file system. Reads find nothing; List is empty. Thread-safe (stateless).
#pragma once

#include "tessera/store/store.h"

namespace tessera {

class NullStore final : public Store {
 public:
  Result<std::optional<Bytes>> Get(const std::string&) const override { return std::optional<Bytes>(); }
  Result<std::optional<Bytes>> GetRange(const std::string&, uint64_t, uint64_t) const override {
    return std::optional<Bytes>();
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string&, uint64_t) const override { return std::optional<Bytes>(); }
  Result<std::optional<uint64_t>> Size(const std::string&) const override { return std::optional<uint64_t>(); }
  std::string Describe(const std::string& key) const override { return "null://" + key; }
  Status Set(const std::string&, ByteView) override { return Status::Ok(); }
  Status SetParts(const std::string&, std::span<const ByteView>) override { return Status::Ok(); }
  Status Erase(const std::string&) override { return Status::Ok(); }
  Result<std::vector<std::string>> List(const std::string&) const override { return std::vector<std::string>(); }
};

}  // namespace tessera
