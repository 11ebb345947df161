// Streaming a volume into Neuroglancer precomputed (one scale), through the same StreamWriter as
// Zarr: tiles are the volume's chunks, cropped to the volume and encoded (raw or
// compressed_segmentation, then gzip when asked) by a TileEncoder; the sink stores
//
//   unsharded:          one file per chunk, "x0-x1_y0-y1_z0-z1"
//   sharded, identity:  the stream's shards are exactly the precomputed shards (the chunks whose
//                       compressed Morton codes share their high bits form an aligned box of
//                       2^kx x 2^ky x 2^kz chunks), so each shard file is written once, complete,
//                       as its box completes: memory stays bounded
//   sharded, murmurhash3_x86_128: boxes scatter over shards; each box's part of a shard is
//                       staged as "<shard>.shard.part-N" and the parts are merged at Finish
//
// The tessera view is C order [c,] z, y, x; the info file is written at creation.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/precomputed/info.h"
#include "tessera/precomputed/sharding_spec.h"
#include "tessera/store/store.h"
#include "tessera/stream/offset_shard_sink.h"
#include "tessera/stream/shard_sink.h"
#include "tessera/stream/stream_writer.h"

namespace tessera::precomputed {

struct PrecomputedOptions {
  DataType dtype = DataType::kUInt8;
  std::vector<int64_t> shape;         // [C,] Z, Y, X; every entry > 0 (no unbounded dimension)
  std::vector<int64_t> chunk_shape;   // Z, Y, X
  std::vector<int64_t> shard_chunks;  // Z, Y, X chunks per shard (powers of two); empty = unsharded
  ChunkEncoding encoding = ChunkEncoding::kRaw;
  std::array<int64_t, 3> cseg_block_xyz{8, 8, 8};
  int jpeg_quality = kDefaultJpegQuality;  // jpeg: 1..100
  int png_level = kDefaultPngLevel;        // png: zlib level 0..9
  bool gzip = false;                  // sharded: gzip chunk data and minishard indices
  ShardHash hash = ShardHash::kIdentity;
  std::array<double, 3> resolution_xyz{1, 1, 1};
  std::array<int64_t, 3> voxel_offset_xyz{0, 0, 0};
  std::string key = "s0";             // the scale's directory; a volume's other scales are kept
};

// The info (one scale, with the derived sharding spec) and the stream layout for `options`.
struct PrecomputedPlan {
  VolumeInfo info;
  stream::StreamLayout layout;
};
Result<PrecomputedPlan> PlanPrecomputedStream(const PrecomputedOptions& options, int threads);

// The stream layout alone (tiles: the chunks; shards: boxes of shard_chunks), for options whose
// volume PlanPrecomputedStream accepts; a continuation's rows (see OpenPrecomputedContinuation)
// need not allow the volume's shard boxes themselves.
Result<stream::StreamLayout> PlanPrecomputedLayout(const PrecomputedOptions& options, int threads);

class PrecomputedSink final : public stream::ShardSink {
 public:
  // `scale` is the scale being written; `previous_info` the info file the volume had before (it
  // is restored by Abandon), if any.
  PrecomputedSink(std::shared_ptr<Store> store, ScaleInfo scale, stream::StreamLayout layout,
                  std::optional<Bytes> previous_info);

  // Stores the shard's present chunks: unsharded, one file each; sharded, the shard file(s)
  // their compressed Morton codes map to (identity hash: exactly one, complete).
  Status WriteShard(const stream::EncodedShard& shard) override;
  Status PublishRows(int64_t rows) override { return Status::Ok(); }
  // Mode a of a sharded scale under an unchanged sharding (the grid's compressed Morton bits per
  // dimension are the stored ones, so every stored chunk keeps its shard): this stream writes the
  // chunks from z chunk `first_chunk_z` on, and the stored shard files hold those below.
  //   identity:    each box is its whole shard, written complete; the boxes of z shard row
  //                `deferred_shard_z` (-1: none) are staged and stored at Finish instead, because
  //                they hold the stored edge chunk at a new extent, which a reader of the stored
  //                info (the old size, until Close) could not decode
  //   murmurhash3: every shard a staged part goes to is merged at Finish with its stored chunks
  //                below first_chunk_z, kept byte for byte
  // Memory stays one shard (its stored file and staged parts) at a time.
  void ContinueStoredShards(int64_t first_chunk_z, int64_t deferred_shard_z);
  // Merges staged shard parts (murmurhash sharding, or the boxes a continuation deferred; see
  // ContinueStoredShards). Call after the writer's Close.
  Status Finish();
  // After a failed or aborted stream: removes the staged shard parts (murmurhash sharding; no
  // reader looks at them) and keeps the info and every chunk or shard file stored, as a crash at
  // that moment would.
  Status DiscardUnpublished();
  // Removes the info file (or restores the one the volume had): for a stream that never opened
  // (its writer could not be created), so a failed CreateStream leaves no volume behind.
  Status Abandon();

 private:
  // The (x, y, z) chunk grid cell of `slot` (row-major over tiles_per_shard) of shard `shard_coords`.
  std::array<int64_t, 3> ChunkXyz(std::span<const int64_t> shard_coords, int64_t slot) const;
  std::string Key(const std::string& name) const { return scale_.key + "/" + name; }
  // The z grid cell of the chunk whose compressed Morton code is `id`.
  int64_t ChunkZOf(uint64_t id) const;
  // Stores the shard file of `list` as a part merged at Finish.
  Status StagePart(uint64_t shard, const Bytes& file);

  std::shared_ptr<Store> store_;
  ScaleInfo scale_;
  std::optional<Bytes> previous_info_;
  stream::StreamLayout layout_;
  index::ChunkGrid tile_grid_;  // C order, tiles_per_shard per shard
  index::ChunkGrid grid_xyz_;   // the scale's chunks, (x, y, z)
  int64_t continued_from_chunk_z_ = -1;  // ContinueStoredShards' first_chunk_z; -1: a new scale
  int64_t deferred_shard_z_ = -1;
  std::atomic<int64_t> next_part_{0};
  std::mutex parts_mu_;
  std::map<uint64_t, std::vector<std::string>> parts_;  // shard -> staged part keys
};

// A precomputed sink plus the writer that feeds it.
struct PrecomputedSinkAndWriter {
  std::unique_ptr<PrecomputedSink> sink;
  std::unique_ptr<stream::ShardSink> region_sink;  // a region's writer feeds this (see OpenPrecomputedRegionStream)
  std::unique_ptr<stream::StreamWriter> writer;
};

// Writes the info of `options`' scale (added to the volume's info when the store holds one of the
// same type, data type and channel count; a scale of the same key is replaced). Returns the info
// the store held before, if any.
Result<std::optional<Bytes>> WriteScaleInfo(Store& store, const PrecomputedOptions& options);

// Writes `info` (adding or replacing scale options.key when the store already holds a volume of
// the same type, data type and channel count) and returns the sink and the writer that feeds it.
Result<PrecomputedSinkAndWriter> OpenPrecomputedStream(std::shared_ptr<Store> store, const PrecomputedOptions& options,
                                                stream::StreamWriterOptions writer_options);

// The writer continuing the stored scale `volume` (its final shape; mode a) from z row `first_row`
// (a shard boundary along z) to the end: `stored_rows` are the rows the stored scale has. Unsharded
// or sharded (identity or murmurhash3) under the stored sharding, which the caller has checked is
// the one `volume` plans (see PrecomputedSink::ContinueStoredShards). The info is not touched: the
// caller writes it after the sink's Finish.
Result<PrecomputedSinkAndWriter> OpenPrecomputedContinuation(std::shared_ptr<Store> store,
                                                             const PrecomputedOptions& volume, int64_t first_row,
                                                             int64_t stored_rows,
                                                             stream::StreamWriterOptions writer_options);

// A writer of one region of an existing scale (scale-out; see stream/offset_shard_sink.h): `region`
// is `volume` with the region's shape; `shard_offset` the region's first shard (unsharded: chunk)
// in the volume's grid. Stores whole chunk or shard files only; the info is not touched (the sink's
// Abandon must not be called). Identity-hash sharding only.
Result<PrecomputedSinkAndWriter> OpenPrecomputedRegionStream(std::shared_ptr<Store> store, const PrecomputedOptions& volume,
                                                      const PrecomputedOptions& region,
                                                      std::vector<int64_t> shard_offset,
                                                      stream::StreamWriterOptions writer_options);

}  // namespace tessera::precomputed
