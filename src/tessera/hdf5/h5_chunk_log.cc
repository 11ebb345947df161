#include "tessera/hdf5/h5_chunk_log.h"

#include <algorithm>

#include "tessera/hdf5/h5_structures.h"
#include "tessera/index/index.h"

namespace tessera::hdf5 {

Status ChunkLog::Append(uint64_t row, uint64_t position, uint64_t address, uint32_t bytes) {
  const size_t at = buffer_.size();
  buffer_.resize(at + kRecordBytes);
  uint8_t* p = buffer_.data() + at;
  EncodeFixed64LE(p, row);
  EncodeFixed64LE(p + 8, position);
  EncodeFixed64LE(p + 16, address);
  EncodeFixed64LE(p + 24, bytes);
  ++records_;
  if (buffer_.size() >= kBufferedRecords * kRecordBytes) return WriteBuffer();
  return Status::Ok();
}

Status ChunkLog::WriteBuffer() {
  if (file_ == nullptr) {
    TESSERA_ASSIGN_OR_RETURN(file_, SpillFile::Create(directory_, purpose_));
  }
  const uint64_t address = file_->Allocate(buffer_.size());
  TESSERA_RETURN_IF_ERROR(file_->WriteAt(address, buffer_));
  buffer_.clear();
  return Status::Ok();
}

ChunkLog::Cursor ChunkLog::Read(std::vector<int64_t> row_grid, uint64_t row_limit, uint64_t address_shift) const {
  return Cursor(this, std::move(row_grid), row_limit, address_shift);
}

Result<uint64_t> ChunkLog::CountLive(const std::vector<int64_t>& row_grid, uint64_t row_limit) const {
  Cursor cursor = Read(row_grid, row_limit, 0);
  uint64_t n = 0;
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(const StoredChunk* chunk, cursor.Next());
    if (chunk == nullptr) return n;
    ++n;
  }
}

Result<bool> ChunkLog::Cursor::ReadRecord(Record* out) {
  const uint8_t* p = nullptr;
  const uint64_t on_disk = log_->records_on_disk();
  if (next_record_ < on_disk) {
    if (block_pos_ == block_.size()) {
      const uint64_t n = std::min<uint64_t>(kBufferedRecords, on_disk - next_record_);
      block_.resize(static_cast<size_t>(n * kRecordBytes));
      TESSERA_RETURN_IF_ERROR(log_->file_->ReadAt(next_record_ * kRecordBytes, block_));
      block_pos_ = 0;
    }
    p = block_.data() + block_pos_;
    block_pos_ += kRecordBytes;
  } else {
    const uint64_t in_buffer = next_record_ - on_disk;
    if (in_buffer * kRecordBytes == log_->buffer_.size()) return false;
    p = log_->buffer_.data() + in_buffer * kRecordBytes;
  }
  ++next_record_;
  out->row = DecodeFixed64LE(p);
  out->position = DecodeFixed64LE(p + 8);
  out->address = DecodeFixed64LE(p + 16);
  out->bytes = static_cast<uint32_t>(DecodeFixed64LE(p + 24));
  return true;
}

void ChunkLog::Cursor::Finish() {
  ready_.clear();
  ready_pos_ = 0;
  const int grid_rank = static_cast<int>(row_grid_.size());
  for (const Record& r : lay_) {
    if (r.address == kUndefinedAddress || r.row >= row_limit_) continue;
    StoredChunk c;
    c.coords.resize(1 + row_grid_.size());
    c.coords[0] = r.row;
    if (grid_rank > 0) {
      std::vector<int64_t> rest(row_grid_.size());
      index::Unravel(grid_rank, row_grid_.data(), static_cast<int64_t>(r.position), rest.data());
      for (int d = 0; d < grid_rank; ++d) c.coords[1 + d] = static_cast<uint64_t>(rest[d]);
    }
    c.address = r.address + address_shift_;
    c.bytes = r.bytes;
    ready_.push_back(std::move(c));
  }
  lay_.clear();
}

Result<const StoredChunk*> ChunkLog::Cursor::Next() {
  while (ready_pos_ == ready_.size()) {
    Record r;
    TESSERA_ASSIGN_OR_RETURN(bool more, ReadRecord(&r));
    if (!more) {
      if (lay_.empty()) return static_cast<const StoredChunk*>(nullptr);
      Finish();
      continue;
    }
    if (r.position == 0 && !lay_.empty()) {
      if (r.row == lay_.front().row) {
        lay_.clear();  // superseded: the row is laid out again
      } else {
        Finish();
      }
    }
    lay_.push_back(r);
  }
  return &ready_[ready_pos_++];
}

}  // namespace tessera::hdf5
