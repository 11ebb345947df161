// Streaming into an HDF5 dataset, through the same StreamWriter as Zarr and precomputed: tiles
// are the dataset's chunks (edge chunks padded to full size with the fill value, as HDF5 stores
// them), filtered by the dataset's pipeline (shuffle, deflate, fletcher32) on the writer's
// threads; the sink appends each finished chunk to its ChunkSpace (the file itself, or a spill
// that a file of several datasets appends at Close: hdf5_shared_file.h) and records it for the
// chunk B-tree, which H5Writer::Close writes with the headers.
//
// Chunks finish on several threads in any order; the sink still lays them out in a fixed order
// (row by row, each row's chunks in grid order), holding a chunk that is early until those
// before it arrive, so the same input always gives the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/hdf5/h5_writer.h"
#include "tessera/stream/shard_sink.h"
#include "tessera/stream/stream_writer.h"

namespace tessera::hdf5 {

struct Hdf5StreamOptions {
  std::string dataset = "/data";
  DataType dtype = DataType::kUInt8;
  std::vector<int64_t> shape;        // shape[0] == 0: unbounded (maximum extent unlimited)
  std::vector<int64_t> chunk_shape;  // empty: AutoChunkShape
  int deflate_level = -1;            // -1: no deflate
  bool shuffle = false;
  bool fletcher32 = false;
  FillValue fill;                    // empty: zero
  std::vector<Attribute> attributes;

  // The dataset these options describe (chunk shape resolved).
  Result<DatasetOptions> ToDatasetOptions() const;
};

// The stream layout for `options`, touching no file (`tessera stream --plan`).
Result<stream::StreamLayout> PlanHdf5Stream(const Hdf5StreamOptions& options, int threads);

// Where a sink lays out its chunks: addresses reserved one after another, and the bytes written
// there. The file itself (FileChunkSpace), or a dataset's spill file that a file of several
// datasets appends to itself at Close (hdf5_shared_file.h). Both calls are thread-safe.
class ChunkSpace {
 public:
  virtual ~ChunkSpace() = default;
  virtual uint64_t Allocate(uint64_t bytes) = 0;
  virtual Status WriteAt(uint64_t address, ByteView bytes) = 0;
};

// The HDF5 file's own address space: chunks land in the file where they are laid out.
class FileChunkSpace final : public ChunkSpace {
 public:
  explicit FileChunkSpace(H5Writer* file) : file_(file) {}
  uint64_t Allocate(uint64_t bytes) override { return file_->Allocate(bytes); }
  Status WriteAt(uint64_t address, ByteView bytes) override { return file_->WriteAt(address, bytes); }

 private:
  H5Writer* const file_;
};

class Hdf5ChunkSink final : public stream::ShardSink {
 public:
  // Lays the dataset's chunks out in `space` (which must outlive the sink) and records their
  // addresses there with `dataset`, or, given `log`, in the log (H5DatasetWriter::UseChunkLog).
  Hdf5ChunkSink(ChunkSpace* space, H5DatasetWriter* dataset, const stream::StreamLayout& layout,
                std::shared_ptr<ChunkLog> log = nullptr);
  // Every shard is one chunk (tiles_per_shard all 1): its one slot is appended to the file, or,
  // absent, removed from the chunk index.
  Status WriteShard(const stream::EncodedShard& shard) override;
  Status PublishRows(int64_t rows) override;

 private:
  struct Placed {
    std::vector<int64_t> coords;
    uint64_t address = 0;
    ByteView bytes;
  };
  // Reserves the chunk's place (none for an empty one) and logs it; the next position.
  Result<Placed> PlaceLocked(const std::vector<int64_t>& coords, ByteView bytes);

  ChunkSpace* space_;
  H5DatasetWriter* dataset_;
  const std::shared_ptr<ChunkLog> log_;  // null: chunks recorded with dataset_
  const int64_t chunks_per_row_;
  const std::vector<int64_t> grid_;  // chunk grid of dimensions 1..rank-1
  std::mutex mu_;
  int64_t next_ = 0;  // the next chunk of the row to lay out (row-major over grid_)
  std::map<int64_t, std::pair<std::vector<int64_t>, Bytes>> early_;  // chunks waiting for their turn
};

// An HDF5 dataset sink plus the writer that feeds it (members destroyed bottom-up: the writer
// before its sink, the sink before its space).
struct Hdf5SinkAndWriter {
  H5DatasetWriter* dataset = nullptr;
  std::unique_ptr<ChunkSpace> space;
  std::unique_ptr<Hdf5ChunkSink> sink;
  std::unique_ptr<stream::StreamWriter> writer;
};

// Creates the dataset in `file` and the writer that feeds it. After writer->Close(), the file's
// Close writes the index and headers; on failure call file->Abandon().
Result<Hdf5SinkAndWriter> OpenHdf5Stream(H5Writer* file, const Hdf5StreamOptions& options,
                                  const stream::StreamWriterOptions& writer_options);
// The same, the chunks laid out in `space` rather than in the file (its addresses are recorded
// as they are: the caller relocates them, H5DatasetWriter::ShiftChunkAddresses), and recorded in
// `log` (null: in memory) for the dataset's index.
Result<Hdf5SinkAndWriter> OpenHdf5Stream(H5Writer* file, std::unique_ptr<ChunkSpace> space,
                                         std::shared_ptr<ChunkLog> log, const Hdf5StreamOptions& options,
                                         const stream::StreamWriterOptions& writer_options);

}  // namespace tessera::hdf5
