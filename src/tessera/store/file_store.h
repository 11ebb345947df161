// A store on a POSIX file system, following the Zarr v3 file system store: key "a/b/c" is the
// file <root>/a/b/c, and listing walks the directory tree below the root.
//
// Atomic replacement. Set() writes the value to a uniquely named temporary file in the target's
// directory, ".<name>.tmp.<pid>.<counter>", and rename()s it over the target. A concurrent
// reader (in this or another process) therefore opens either the old file or the new one and
// reads it whole; a crash leaves the old value or the new one, plus at worst a stray temporary
// file. Temporary files are never listed, a key whose last segment looks like one is rejected,
// and stray ones left by a crash are harmless and may be deleted.
//
// Durability is a separate, opt-in guarantee: see FileStoreOptions::fsync.
//
// Conditional writes (SetPartsIf, EraseIf) and generations. A value's generation is its file's
// inode number, size and modification time (and the inode's generation number where the file
// system has one): every write stores a new file, so any rewrite changes it. SetPartsIf writes its
// temporary file first, then takes an exclusive flock(2) on the key's directory, compares the
// key's generation with the condition, and renames the file into place (or removes it and returns
// false), then unlocks; EraseIf likewise unlinks under the lock. The lock is taken on a descriptor
// opened per call, so it excludes conditional writers in other threads as well as in other
// processes sharing the root, on local file systems (NFS emulates flock with byte-range locks,
// which a directory opened read-only cannot take: kIo). Readers take no lock and are never
// blocked; plain Set, SetParts and Erase take none either, so they are not ordered with
// conditional writes (a writer that needs compare-and-swap uses it for every write of the key).
// Keys of one directory share its lock, briefly (a stat and a rename).
//
// Limits of the mapping. A key cannot also be a directory of other keys: with "a/b" stored,
// Set("a") fails with kIo, and Get("a") / Size("a") see no value. Directories are not keys.
// Symbolic links to files are read through; symbolic links to directories are not listed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/store/store.h"

namespace tessera {

struct FileStoreOptions {
  // When true, Set() fsyncs the new file before renaming it into place, then fsyncs its
  // directory (and every directory up to the root when Set had to create directories), so a
  // Set that returned OK survives an OS crash or power loss. When false (the default) Set is
  // just as atomic for readers and for a crash of this process, but after an OS crash or power
  // loss a recently set key may hold its old value or, on some file systems, be empty. The
  // flushes cost milliseconds per Set on most disks, which dominates writing small chunks.
  bool fsync = false;
};

// Thread-safe: every method may be called concurrently from any number of threads, and several
// processes may share one root. Concurrent Sets of one key leave one of the values whole.
// Errors: a missing key is nullopt (never an error); an invalid key (see key_validation.h) is
// kInvalidArgument; a range past the end of a value is kOutOfRange; anything the operating
// system refuses is kIo naming the file path and the system's reason.
class FileStore final : public Store {
 public:
  // Opens the store rooted at directory `root`. With `create`, a missing root (and its missing
  // parents) is created; without, a missing root is kNotFound. A root that exists but is not a
  // directory is kIo; an empty `root` is kInvalidArgument.
  static Result<std::unique_ptr<FileStore>> Open(const std::string& root, bool create,
                                                 FileStoreOptions options = {});

  // A store rooted at `root` (must be non-empty; trailing '/' are ignored). Touches no file;
  // the root directory is created by the first Set() if it does not exist.
  explicit FileStore(std::string root, FileStoreOptions options = {});
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  Result<std::optional<Bytes>> Get(const std::string& key) const override;
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset,
                                        uint64_t length) const override;
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override;
  Result<std::optional<uint64_t>> Size(const std::string& key) const override;
  // The file path of `key`: root + "/" + key.
  std::string Describe(const std::string& key) const override;

  // Creates missing parent directories, then replaces the file atomically (see above). On
  // failure the old value, if any, is intact and the temporary file is removed; the one
  // exception is a failed directory fsync (FileStoreOptions::fsync), reported after the new
  // value is already in place but possibly not yet durable.
  Status Set(const std::string& key, ByteView value) override;
  // Set with the value given in pieces: the pieces are written to the temporary file in order
  // (with writev, no assembled copy), with the same atomicity and failure behaviour as Set.
  Status SetParts(const std::string& key, std::span<const ByteView> parts) override;
  // A file written in place (see writable_file.h): a temporary file ".<name>.tmp.<pid>.<counter>"
  // beside the target (missing parent directories are created, as by Set), written with pwrite,
  // and at Commit fsynced (always: the data is durable before it becomes visible), closed and
  // renamed over the target; with FileStoreOptions::fsync the directories are then fsynced as
  // after Set. Abandon (or destroying the file uncommitted) removes the temporary file; a crash
  // leaves it behind as a stray temporary file, never a partial value under the key. Errors are
  // kIo naming the target's path (Describe(key)) and the system's reason.
  Result<std::unique_ptr<WritableFile>> OpenWritableFile(const std::string& key) override;
  // The same temporary file, fsynced at Commit only with FileStoreOptions::fsync (as Set is).
  Result<std::unique_ptr<WritableFile>> OpenInPlaceFile(const std::string& key) override;
  bool writes_in_place() const override { return true; }
  // Removes the file (a missing key or a directory is OK: neither is a value), then removes
  // parent directories that became empty, stopping below the root.
  Status Erase(const std::string& key) override;
  // The value and its file's generation, read from one open file (see "Conditional writes" above).
  Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const override;
  // Compare-and-swap under the directory's lock (see above). Missing parent directories are
  // created, as by Set; false leaves no temporary file behind.
  Result<bool> SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                          const WriteCondition& condition) override;
  // Unlinks the file under the directory's lock if its generation is the expected one, then
  // removes parent directories that became empty, as Erase does.
  Result<bool> EraseIf(const std::string& key, const WriteCondition& condition) override;

  // Keys of all regular files below the root whose key starts with `prefix`, sorted. Only the
  // directory named by the part of `prefix` up to its last '/' is walked.
  Result<std::vector<std::string>> List(const std::string& prefix) const override;

  // The root directory as given, without trailing '/' ("/" for the file system root).
  std::string root() const { return root_.empty() ? "/" : root_; }
  const FileStoreOptions& options() const { return options_; }

  // True for names of the form ".<name>.tmp.<digits>.<digits>" that Set() uses for its
  // temporary files.
  static bool IsTemporaryFileName(std::string_view file_name);

 private:
  // A value written to its temporary file beside `path`, not yet renamed into place.
  struct TempFile {
    std::string path;
    bool created_dirs = false;  // whether creating it created missing parent directories
  };

  // Validates `key` and returns its file path.
  Result<std::string> PathFor(const std::string& key) const;
  // OpenWritableFile and OpenInPlaceFile: the temporary file, fsynced at Commit when `sync`.
  Result<std::unique_ptr<WritableFile>> OpenTemporaryFile(const std::string& key, bool sync);
  // Writes `parts` to a new temporary file beside `path` (creating missing parent directories),
  // fsynced with FileStoreOptions::fsync; on failure nothing is left behind.
  Result<TempFile> WriteTempFile(const std::string& path, std::span<const ByteView> parts) const;
  // Renames `temp` over `path` (the file of `key`), then fsyncs directories with
  // FileStoreOptions::fsync; a failed rename removes `temp`.
  Status RenameIntoPlace(const std::string& key, const std::string& path, const TempFile& temp) const;
  // Removes the now-empty parent directories of `key`, deepest first, never the root.
  void RemoveEmptyParents(const std::string& key) const;
  // fsyncs the directory of `key` and, when `up_to_root`, every directory above it up to the
  // root (so that newly created directories are durable too).
  Status SyncDirectories(const std::string& key, bool up_to_root) const;

  std::string root_;  // trailing '/' removed; "" stands for "/"
  FileStoreOptions options_;
};

}  // namespace tessera
