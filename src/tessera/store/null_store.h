// A store that discards every write: the "discard" sink for benchmarks that measure the pipeline
// without the file system. Reads find nothing; List is empty. Thread-safe (stateless).
#pragma once

#include <memory>
#include <string>

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
  // A file whose bytes go nowhere (nothing is staged): Commit stores nothing.
  Result<std::unique_ptr<WritableFile>> OpenWritableFile(const std::string& key) override {
    return std::unique_ptr<WritableFile>(new DiscardingFile(Describe(key)));
  }
  Result<std::vector<std::string>> List(const std::string&) const override { return std::vector<std::string>(); }

 private:
  class DiscardingFile final : public WritableFile {
   public:
    explicit DiscardingFile(std::string where) : where_(std::move(where)) {}
    Status WriteAt(uint64_t, ByteView) override { return Check("write"); }
    Status Truncate(uint64_t) override { return Check("truncate"); }
    Status Commit() override {
      TESSERA_RETURN_IF_ERROR(Check("Commit"));
      open_ = false;
      return Status::Ok();
    }
    void Abandon() override { open_ = false; }
    std::string Describe() const override { return where_; }

   private:
    Status Check(const char* what) const {
      if (open_) return Status::Ok();
      return FailedPrecondition(where_ + ": " + what + " after Commit or Abandon");
    }
    const std::string where_;
    bool open_ = true;
  };
};

}  // namespace tessera
