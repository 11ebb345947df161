#include "tessera/hdf5/h5_raw_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tessera/hdf5/h5_checksum.h"

namespace tessera::hdf5 {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

Result<std::shared_ptr<RawFile>> RawFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string m = path + ": cannot open: " + std::strerror(err);
    return err == ENOENT ? NotFound(m) : IoError(m);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": not a regular file");
  }
  return std::shared_ptr<RawFile>(new RawFile(fd, path, static_cast<uint64_t>(st.st_size)));
}

Result<std::shared_ptr<RawFile>> RawFile::Open(std::shared_ptr<const ReadableStore> store, const std::string& key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, store->Size(key));
  const std::string where = store->Describe(key);
  if (!size) return NotFound(where + ": no such object");
  std::shared_ptr<RawFile> file(new RawFile(-1, where, *size));
  file->store_ = std::move(store);
  file->key_ = key;
  return file;
}

RawFile::~RawFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::shared_ptr<const Bytes>> RawFile::Block(uint64_t index, std::string_view what) const {
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->first != index) continue;
      blocks_.splice(blocks_.begin(), blocks_, it);
      return it->second;
    }
  }
  const uint64_t begin = index * kBlockBytes, len = std::min(kBlockBytes, size_ - begin);
  Result<std::optional<Bytes>> got = GetExactRange(*store_, key_, begin, len);
  if (!got.ok()) return got.status().WithContext(std::string(what));
  if (!*got) return NotFound(path_ + ": " + std::string(what) + ": the object disappeared");
  auto block = std::make_shared<const Bytes>(std::move(**got));
  std::lock_guard<std::mutex> lock(cache_mu_);
  blocks_.emplace_front(index, block);
  if (blocks_.size() > kCachedBlocks) blocks_.pop_back();
  return block;
}

Status RawFile::ReadFromStore(uint64_t offset, uint64_t len, uint8_t* dst, std::string_view what) const {
  if (len >= kBlockBytes) {
    // Chunk data: one range request, not cached.
    Result<std::optional<Bytes>> got = GetExactRange(*store_, key_, offset, len);
    if (!got.ok()) return got.status().WithContext(Where(what, offset, len));
    if (!*got) return NotFound(Where(what, offset, len) + ": the object disappeared");
    std::memcpy(dst, (*got)->data(), static_cast<size_t>(len));
    return Status::Ok();
  }
  for (uint64_t at = offset; at < offset + len;) {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const Bytes> block, Block(at / kBlockBytes, Where(what, offset, len)));
    const uint64_t in_block = at % kBlockBytes;
    const uint64_t n = std::min(offset + len - at, static_cast<uint64_t>(block->size()) - in_block);
    std::memcpy(dst + (at - offset), block->data() + in_block, static_cast<size_t>(n));
    at += n;
  }
  return Status::Ok();
}

std::string RawFile::Where(std::string_view what, uint64_t addr, uint64_t len) const {
  return path_ + ": " + std::string(what) + " at " + Hex(addr) + ".." + Hex(addr + len);
}

Status RawFile::Corrupt(std::string_view what, uint64_t addr, uint64_t len, std::string_view message) const {
  return CorruptData(Where(what, addr, len) + ": " + std::string(message));
}

Status RawFile::ReadAbsolute(uint64_t offset, uint64_t len, uint8_t* dst, std::string_view what) const {
  if (offset > size_ || len > size_ - offset)
    return CorruptData(Where(what, offset, len) + ": outside the file (" + std::to_string(size_) +
                       " bytes; truncated or corrupt address)");
  if (store_) return ReadFromStore(offset, len, dst, what);
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd_, dst + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(Where(what, offset, len) + ": read failed: " + std::strerror(errno));
    }
    if (n == 0) return CorruptData(Where(what, offset, len) + ": unexpected end of file");
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status RawFile::ReadInto(uint64_t addr, uint64_t len, uint8_t* dst, std::string_view what) const {
  if (addr == kUndefinedAddress) return CorruptData(path_ + ": " + std::string(what) + ": undefined address");
  if (addr > size_ || base_ > size_ - addr)
    return CorruptData(Where(what, addr, len) + ": address outside the file (" + std::to_string(size_) + " bytes)");
  return ReadAbsolute(base_ + addr, len, dst, what);
}

Result<Bytes> RawFile::Read(uint64_t addr, uint64_t len, std::string_view what) const {
  // Checked before allocating, so a corrupt length cannot ask for an absurd buffer.
  if (addr == kUndefinedAddress) return CorruptData(path_ + ": " + std::string(what) + ": undefined address");
  if (addr > size_ || len > size_ || base_ + addr > size_ - len)
    return CorruptData(Where(what, addr, len) + ": outside the file (" + std::to_string(size_) +
                       " bytes; truncated or corrupt address/length)");
  Bytes out(static_cast<size_t>(len));
  TESSERA_RETURN_IF_ERROR(ReadInto(addr, len, out.data(), what));
  return out;
}

uint64_t FieldReader::U(size_t width) {
  ByteView v = Take(width);
  if (v.size() != width) return 0;
  uint64_t x = 0;
  for (size_t i = width; i-- > 0;) x = (x << 8) | v[i];
  return x;
}

ByteView FieldReader::Take(size_t n) {
  if (!status_.ok()) return {};
  if (n > remaining()) {
    (void)Fail("truncated: " + std::to_string(n) + " bytes needed at byte " + std::to_string(pos_) + ", " +
         std::to_string(remaining()) + " left");
    return {};
  }
  ByteView v = data_.subspan(pos_, n);
  pos_ += n;
  return v;
}

bool FieldReader::ExpectSignature(std::string_view signature) {
  ByteView v = Take(signature.size());
  if (!ok()) return false;
  if (std::memcmp(v.data(), signature.data(), signature.size()) != 0) {
    std::string got;
    for (uint8_t c : v) got += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
    (void)Fail("bad signature \"" + got + "\" (expected \"" + std::string(signature) + "\")");
    return false;
  }
  return true;
}

bool FieldReader::VerifyChecksum() {
  const size_t checked = pos_;
  const uint32_t stored = U32();
  if (!ok()) return false;
  const uint32_t computed = Lookup3Hash(data_.subspan(0, checked));
  if (stored != computed) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "checksum mismatch (stored 0x%08x, computed 0x%08x)", stored, computed);
    (void)Fail(buf);
    return false;
  }
  return true;
}

Status FieldReader::Fail(std::string_view message) {
  if (status_.ok()) status_ = file_.Corrupt(what_, addr_, data_.size(), message);
  return status_;
}

}  // namespace tessera::hdf5
