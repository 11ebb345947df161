// A streamed dataset's chunk records kept on disk rather than in memory, so that indexing a
// stream of any length costs little memory: the sink appends one 32-byte record per chunk it lays
// out, in layout order, and H5Writer::Close replays them, in the B-tree's order, into
// WriteChunkBTree.
//
//   record (little-endian): row u64 | position u64 | address u64 | bytes u32 | 0 u32
//
// `row` is the chunk's coordinate along dimension 0; `position` its index in the row, row-major
// over the chunk grid of dimensions 1.. (Ravel); `address` kUndefinedAddress for a chunk that is
// all fill value (not stored). The sink lays out each chunk row whole, positions 0, 1, ... in
// order, once per flush that reached the row and once when it completes; rows only grow. So the
// log is a run of "lays", each starting at position 0, and a lay of a row followed by another lay
// of the same row is superseded by it: the replay keeps each row's last lay, drops the chunks
// that are not stored and the rows past the dataset's final extent, and holds one lay in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/hdf5/chunk_btree.h"
#include "tessera/hdf5/h5_spill_file.h"

namespace tessera::hdf5 {

class ChunkLog {
 public:
  static constexpr size_t kRecordBytes = 32;
  static constexpr size_t kBufferedRecords = 2048;  // 64 KiB written, or read, at a time

  // A log whose records past the first kBufferedRecords go to an unnamed file in `directory`,
  // made when first needed (a short stream, a plate's small field, costs no file descriptor);
  // `purpose` names it in errors.
  ChunkLog(std::string directory, std::string purpose)
      : directory_(std::move(directory)), purpose_(std::move(purpose)) {}

  // Appends the record of one chunk laid out. Not thread-safe: one caller (the sink, under its
  // lock, in layout order).
  Status Append(uint64_t row, uint64_t position, uint64_t address, uint32_t bytes);
  uint64_t records() const { return records_; }

  // Reads the log back (after the last Append) as the live chunks in B-tree order: each row's
  // last lay, chunks stored, rows < `row_limit`; coordinates from `row_grid` (the chunk grid of
  // dimensions 1..), addresses plus `address_shift`.
  class Cursor {
   public:
    // The next live chunk, or null at the end. The pointee stays valid until the next call.
    Result<const StoredChunk*> Next();

   private:
    friend class ChunkLog;
    Cursor(const ChunkLog* log, std::vector<int64_t> row_grid, uint64_t row_limit, uint64_t address_shift)
        : log_(log), row_grid_(std::move(row_grid)), row_limit_(row_limit), address_shift_(address_shift) {}
    struct Record {
      uint64_t row, position, address;
      uint32_t bytes;
    };
    Result<bool> ReadRecord(Record* out);
    void Finish();  // moves the lay in `lay_` (live chunks only) to `ready_`

    const ChunkLog* log_;
    const std::vector<int64_t> row_grid_;
    const uint64_t row_limit_;
    const uint64_t address_shift_;
    Bytes block_;               // records read from the file, not yet consumed
    size_t block_pos_ = 0;
    uint64_t next_record_ = 0;  // the next record to read (the file's, then the buffer's)
    std::vector<Record> lay_;   // the lay being read
    std::vector<StoredChunk> ready_;  // the last finished lay's live chunks
    size_t ready_pos_ = 0;
  };
  Cursor Read(std::vector<int64_t> row_grid, uint64_t row_limit, uint64_t address_shift) const;
  // How many chunks a Cursor with these arguments yields.
  Result<uint64_t> CountLive(const std::vector<int64_t>& row_grid, uint64_t row_limit) const;

 private:
  Status WriteBuffer();  // the buffered records to the file (made now if need be)
  uint64_t records_on_disk() const { return file_ == nullptr ? 0 : file_->size() / kRecordBytes; }

  const std::string directory_;
  const std::string purpose_;
  std::unique_ptr<SpillFile> file_;  // null until the first buffer is written
  Bytes buffer_;                     // the records after the file's
  uint64_t records_ = 0;
};

}  // namespace tessera::hdf5
