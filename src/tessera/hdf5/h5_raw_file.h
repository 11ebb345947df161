// The HDF5 file's raw bytes as the reader sees them (RawFile; Hdf5File in h5_reader.h is the parsed
// file): a local file read with pread, or an object of a store (S3,
// HTTP) read with byte-range requests, where reads smaller than a block (the file's structures)
// go through a small cache of aligned blocks so that parsing costs few requests. Thread-safe; every
// read checked against the file size. And a little-endian field reader for parsing one structure.
//
// Addresses are relative to the superblock's base address (set_base). Every error names the file,
// the structure and its byte range: "f.h5: object header at 0x1a0..0x1c8: bad signature".
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/hdf5/h5_format.h"
#include "tessera/store/store.h"

namespace tessera::hdf5 {

struct SharedMessageTable;  // h5_shared_messages.h

// "0x1a0"
std::string Hex(uint64_t v);

class RawFile {
 public:
  static Result<std::shared_ptr<RawFile>> Open(const std::string& path);
  // The object `key` of `store`; errors name store.Describe(key).
  static Result<std::shared_ptr<RawFile>> Open(std::shared_ptr<const ReadableStore> store, const std::string& key);
  ~RawFile();

  // Reads the caller should keep in flight (the store's; 0 for a local file).
  int io_concurrency() const { return store_ ? store_->io_concurrency() : 0; }
  // Block size and capacity of the cache of a store-backed file.
  static constexpr uint64_t kBlockBytes = 64 << 10;
  static constexpr size_t kCachedBlocks = 64;
  RawFile(const RawFile&) = delete;
  RawFile& operator=(const RawFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  uint64_t base() const { return base_; }
  void set_base(uint64_t base) { base_ = base; }
  // Store-backed files: the store and the object's key (null and empty for a local file).
  const std::shared_ptr<const ReadableStore>& store() const { return store_; }
  const std::string& key() const { return key_; }
  // The file's shared-message table (h5_shared_messages.h), set once when the file opens, before
  // any object header is read; null when the file shares no messages.
  const SharedMessageTable* shared_messages() const { return shared_messages_.get(); }
  void set_shared_messages(std::shared_ptr<const SharedMessageTable> table) { shared_messages_ = std::move(table); }

  // Reads `len` bytes at relative address `addr`. kCorruptData naming `what` when the range is
  // (partly) outside the file or undefined, kIo when the OS fails.
  Result<Bytes> Read(uint64_t addr, uint64_t len, std::string_view what) const;
  Status ReadInto(uint64_t addr, uint64_t len, uint8_t* dst, std::string_view what) const;
  // Reads at an absolute file offset (for the signature search, before the base is known).
  Status ReadAbsolute(uint64_t offset, uint64_t len, uint8_t* dst, std::string_view what) const;

  // "f.h5: <what> at 0x10..0x20"
  std::string Where(std::string_view what, uint64_t addr, uint64_t len) const;
  Status Corrupt(std::string_view what, uint64_t addr, uint64_t len, std::string_view message) const;

 private:
  RawFile(int fd, std::string path, uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  // Bytes [offset, offset + len) of the object, through the block cache when small.
  Status ReadFromStore(uint64_t offset, uint64_t len, uint8_t* dst, std::string_view what) const;
  Result<std::shared_ptr<const Bytes>> Block(uint64_t index, std::string_view what) const;

  int fd_ = -1;
  std::string path_;
  uint64_t size_;
  uint64_t base_ = 0;
  std::shared_ptr<const SharedMessageTable> shared_messages_;
  // Store-backed files only.
  std::shared_ptr<const ReadableStore> store_;
  std::string key_;
  mutable std::mutex cache_mu_;
  mutable std::list<std::pair<uint64_t, std::shared_ptr<const Bytes>>> blocks_;  // most recent first
};

// Reads little-endian fields from one structure's bytes. Errors are sticky: after the first
// out-of-bounds read every read returns 0 and status() reports the first failure, so parsers
// check once per structure (and before any loop whose bound came from the data).
class FieldReader {
 public:
  FieldReader(ByteView data, const RawFile& file, std::string what, uint64_t addr)
      : data_(data), file_(file), what_(std::move(what)), addr_(addr) {}

  uint64_t U(size_t width);
  uint8_t U8() { return static_cast<uint8_t>(U(1)); }
  uint16_t U16() { return static_cast<uint16_t>(U(2)); }
  uint32_t U32() { return static_cast<uint32_t>(U(4)); }
  uint64_t U64() { return U(8); }
  uint64_t Addr() { return U(8); }    // size of offsets (tessera reads 8-byte files only)
  uint64_t Length() { return U(8); }  // size of lengths
  ByteView Take(size_t n);
  void Skip(size_t n) { Take(n); }
  // Checks a 4-byte signature; a mismatch fails with "bad signature".
  bool ExpectSignature(std::string_view signature);
  // Checks that the lookup3 hash of bytes [0, pos()) equals the next 4 bytes (which it consumes).
  bool VerifyChecksum();

  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  size_t remaining() const { return pos_ <= data_.size() ? data_.size() - pos_ : 0; }
  size_t size() const { return data_.size(); }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // Records (if first) and returns a corrupt-data error about this structure.
  Status Fail(std::string_view message);

 private:
  ByteView data_;
  const RawFile& file_;
  std::string what_;
  uint64_t addr_;
  size_t pos_ = 0;
  Status status_;
};

}  // namespace tessera::hdf5
