#include "tessera/api/pyramid_stream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tessera/api/driver_registry.h"
#include "tessera/api/stream_lifecycle.h"
#include "tessera/index/strided_copy.h"
#include "tessera/pyramid/downsample.h"
#include "tessera/store/null_store.h"
#include "tessera/stream/layout.h"
#include "tessera/zarr/array.h"

namespace tessera::api_internal {
namespace {

// Aborts the level streams, the last first; each keeps what it published, and so does the
// multiscale root (an OME-Zarr group lists levels that all exist).
void AbortLevels(std::vector<std::unique_ptr<Stream>>& levels) {
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) (*it)->Abort();
}

class PyramidStream final : public LifecycleStream {
 public:
  PyramidStream(Format format, ArraySpec spec, Location location, std::vector<std::unique_ptr<Stream>> levels,
                std::vector<std::unique_ptr<pyramid::RowDownsampler>> down, std::shared_ptr<Store> group_store,
                std::string plan)
      : LifecycleStream(format, std::move(spec)),
        location_(std::move(location)),
        levels_(std::move(levels)),
        down_(std::move(down)),
        group_store_(std::move(group_store)),
        plan_(std::move(plan)),
        row_bytes_(levels_[0]->row_bytes()) {
    for (const auto& d : down_) reduced_.emplace_back(static_cast<size_t>(d->output_row_bytes()));
    if (this->spec().reorders_arrival() && !down_.empty()) PlanRowTranspose();
  }
  ~PyramidStream() override { Abort(); }

  Status Append(ByteView bytes) override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("Append"));
    TESSERA_RETURN_IF_ERROR(FailOnError(levels_[0]->Append(bytes)));
    return FailOnError(FeedRows(bytes));
  }

  Result<int64_t> AppendFrom(const stream::StreamWriter::ReadFn& read) override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("AppendFrom"));
    // Level 0 reads; what it read goes down the pyramid before level 0 takes the next bytes.
    Result<int64_t> taken = levels_[0]->AppendFrom([&](MutableByteView dst) -> Result<size_t> {
      TESSERA_ASSIGN_OR_RETURN(size_t n, read(dst));
      TESSERA_RETURN_IF_ERROR(FeedRows(ByteView(dst.data(), n)));
      return n;
    });
    if (!taken.ok()) return FailOnError(taken.status());
    return taken;
  }

  Status Flush() override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("Flush"));
    for (auto& level : levels_) TESSERA_RETURN_IF_ERROR(FailOnError(level->Flush()));
    return PublishPendingAttributes();
  }

  Status Close() override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("Close"));
    if (!partial_row_.empty()) {
      // Level 0's Close reports the incomplete row; the pyramid has nothing of it.
      return FailOnError(levels_[0]->Close());
    }
    TESSERA_RETURN_IF_ERROR(FailOnError(levels_[0]->Close()));
    for (size_t k = 0; k < down_.size(); ++k) {
      // The last, incomplete group of level k's rows is level k+1's last row.
      if (down_[k]->ReducePending(reduced_[k].data())) TESSERA_RETURN_IF_ERROR(FailOnError(PushReduced(k)));
      TESSERA_RETURN_IF_ERROR(FailOnError(levels_[k + 1]->Close()));
    }
    TESSERA_RETURN_IF_ERROR(PublishPendingAttributes());
    MarkClosed();
    return Status::Ok();
  }

  StreamStatistics stats() const override {
    StreamStatistics out = levels_[0]->stats();
    for (size_t k = 1; k < levels_.size(); ++k) {
      const StreamStatistics s = levels_[k]->stats();
      out.bytes_out += s.bytes_out;
      out.shards_written += s.shards_written;
    }
    return out;
  }

  int64_t row_bytes() const override { return row_bytes_; }
  std::string DescribePlan() const override { return plan_; }

 private:
  // Splits `bytes` (the next bytes of level 0) into whole rows for the first downsampler; a row
  // split across calls is collected in partial_row_.
  Status FeedRows(ByteView bytes) {
    if (down_.empty()) return Status::Ok();
    const size_t row = static_cast<size_t>(row_bytes_);
    if (!partial_row_.empty()) {
      const size_t k = std::min(row - partial_row_.size(), bytes.size());
      partial_row_.insert(partial_row_.end(), bytes.data(), bytes.data() + k);
      bytes = bytes.subspan(k);
      if (partial_row_.size() < row) return Status::Ok();
      TESSERA_RETURN_IF_ERROR(PushArrivingRow(partial_row_.data()));
      partial_row_.clear();
    }
    for (; bytes.size() >= row; bytes = bytes.subspan(row)) TESSERA_RETURN_IF_ERROR(PushArrivingRow(bytes.data()));
    partial_row_.assign(bytes.begin(), bytes.end());
    return Status::Ok();
  }

  // A level-0 row as it arrived goes to downsampler 0 in stored order: level 0's stream scatters
  // the arriving bytes itself, but the downsamplers reduce stored rows (so every level is the one
  // the transposed data gives, to the last bit of a float mean), so a row whose dimensions arrive
  // reordered is transposed first, one row at a time.
  Status PushArrivingRow(const uint8_t* row) {
    if (stored_row_.empty()) return PushRow(0, row);
    index::CopyStrided(row_rank_, row_count_, row, row_src_strides_, stored_row_.data(), row_dst_strides_,
                       static_cast<size_t>(item_bytes_));
    return PushRow(0, stored_row_.data());
  }

  // The strided copy PushArrivingRow makes: over the arriving dimensions 1.. of a row, the source
  // row-major, the destination at the stored place of each.
  void PlanRowTranspose() {
    const ArraySpec& s = spec();
    const int rank = static_cast<int>(s.shape.size());
    item_bytes_ = static_cast<int64_t>(ItemSize(s.dtype));
    row_rank_ = rank - 1;
    int64_t stored_row[kMaxRank], stored_strides[kMaxRank];
    for (int d = 1; d < rank; ++d) {
      stored_row[d - 1] = s.shape[d];
      row_count_[d - 1] = s.shape[s.arrival_order[d]];
    }
    index::RowMajorStrides(row_rank_, stored_row, stored_strides);
    index::RowMajorStrides(row_rank_, row_count_, row_src_strides_);
    for (int i = 0; i < row_rank_; ++i) {
      row_src_strides_[i] *= item_bytes_;
      row_dst_strides_[i] = stored_strides[s.arrival_order[i + 1] - 1] * item_bytes_;
    }
    stored_row_.resize(static_cast<size_t>(row_bytes_));
  }

  // Row `row` of level k goes into downsampler k; a completed reduction becomes level k+1's next row.
  Status PushRow(size_t k, const uint8_t* row) {
    if (!down_[k]->AddRow(row, reduced_[k].data())) return Status::Ok();
    return PushReduced(k);
  }

  Status PushReduced(size_t k) {
    TESSERA_RETURN_IF_ERROR(levels_[k + 1]->Append(reduced_[k]));
    return k + 1 < down_.size() ? PushRow(k + 1, reduced_[k].data()) : Status::Ok();
  }

  void Abandon() override { AbortLevels(levels_); }

  // The image's attributes live on its multiscale root (an OME-Zarr group), rewritten whole.
  bool TakesAttributes() const override { return group_store_ != nullptr; }
  Status ApplyAttributes(const nlohmann::json& attributes) override {
    ArraySpec s = spec();
    s.attributes = attributes;
    return DriverOf(format()).CreateMultiscaleRoot(s, location_, *group_store_);
  }

  const Location location_;  // the multiscale root's

  std::vector<std::unique_ptr<Stream>> levels_;
  std::vector<std::unique_ptr<pyramid::RowDownsampler>> down_;  // down_[k]: level k -> k + 1
  std::vector<Bytes> reduced_;                                  // down_[k]'s output row
  std::shared_ptr<Store> group_store_;  // the multiscale root's store (an OME-Zarr group's), or null
  const std::string plan_;
  const int64_t row_bytes_;
  Bytes partial_row_;  // level 0 bytes of a row not complete yet
  // Rows arriving with dimensions reordered (spec().arrival_order): downsampler 0's input row in
  // stored order, and the copy into it (PlanRowTranspose). Empty: rows arrive in stored order.
  Bytes stored_row_;
  int row_rank_ = 0;
  int64_t item_bytes_ = 0;
  int64_t row_count_[kMaxRank] = {};
  int64_t row_src_strides_[kMaxRank] = {};
  int64_t row_dst_strides_[kMaxRank] = {};
};

Result<std::vector<std::unique_ptr<pyramid::RowDownsampler>>> MakeDownsamplers(Format format, const ArraySpec& s) {
  std::vector<std::unique_ptr<pyramid::RowDownsampler>> down;
  for (int k = 0; k + 1 < s.level_count(); ++k) {
    const ArraySpec level = LevelSpec(s, format, k);
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<pyramid::RowDownsampler> d,
                             pyramid::RowDownsampler::Create(s.dtype, *s.pyramid.method, level.shape, s.pyramid.factors));
    down.push_back(std::move(d));
  }
  return down;
}

std::string Mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Each level's plan and the pyramid's extra memory (levels 1.. and the downsamplers `down`), as
// `--plan` prints them, and the planned peak of the whole pyramid (an acquisition's budget).
struct PyramidPlan {
  std::string text;
  int64_t peak_bytes = 0;
};
Result<PyramidPlan> DescribePyramid(Format format, const ArraySpec& s, int threads,
                                    const std::vector<std::unique_ptr<pyramid::RowDownsampler>>& down,
                                    int input_buffers = 2) {
  std::string text;
  int64_t level0 = 0, extra = 0;
  for (int k = 0; k < s.level_count(); ++k) {
    const ArraySpec level = LevelSpec(s, format, k);
    TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, DriverOf(format).Plan(level, threads));
    TESSERA_RETURN_IF_ERROR(stream::ApplyArrivalOrder(&layout, level.arrival_order));  // level 0's
    layout.planned_peak_bytes -= (layout.input_buffers - input_buffers) * layout.epoch_buffer_bytes;
    layout.input_buffers = input_buffers;
    std::string shape;
    for (int64_t v : level.shape) {
      if (!shape.empty()) shape += 'x';
      shape += v == 0 ? std::string("unbounded") : std::to_string(v);
    }
    text += "level " + std::to_string(k) + " (" + shape + "):\n" + stream::DescribePlan(layout, threads);
    (k == 0 ? level0 : extra) += layout.planned_peak_bytes;
  }
  for (const auto& d : down) extra += d->memory_bytes() + d->output_row_bytes() + d->input_row_bytes();
  // Rows arriving reordered are transposed into one stored-order row for downsampler 0.
  if (s.reorders_arrival() && !down.empty()) extra += down[0]->input_row_bytes();
  text += "pyramid: " + std::to_string(s.level_count()) + " levels, " +
          std::string(pyramid::DownsampleMethodName(*s.pyramid.method)) + "; extra memory beyond level 0: " +
          Mib(extra) + " (levels 1.. and the downsamplers)\n";
  return PyramidPlan{std::move(text), level0 + extra};
}

}  // namespace

Result<int64_t> PlannedPeakBytes(Format format, const ArraySpec& s, int threads, int input_buffers) {
  if (s.multiscale()) {
    TESSERA_ASSIGN_OR_RETURN(auto down, MakeDownsamplers(format, s));
    TESSERA_ASSIGN_OR_RETURN(PyramidPlan plan, DescribePyramid(format, s, threads, down, input_buffers));
    return plan.peak_bytes;
  }
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, DriverOf(format).Plan(s, threads));
  return layout.planned_peak_bytes - (layout.input_buffers - input_buffers) * layout.epoch_buffer_bytes;
}

Result<std::string> PlanPyramid(Format format, const ArraySpec& s, int threads) {
  TESSERA_ASSIGN_OR_RETURN(auto down, MakeDownsamplers(format, s));
  TESSERA_ASSIGN_OR_RETURN(PyramidPlan plan, DescribePyramid(format, s, threads, down));
  return std::move(plan.text);
}

Result<std::unique_ptr<Stream>> CreatePyramidStream(Format format, const ArraySpec& s, const Location& location,
                                                    const StreamOptions& options, int threads,
                                                    const LevelOpener& open_level, bool create_group) {
  TESSERA_ASSIGN_OR_RETURN(auto down, MakeDownsamplers(format, s));
  TESSERA_ASSIGN_OR_RETURN(PyramidPlan levels_plan, DescribePyramid(format, s, threads, down, options.input_buffers));
  std::string plan = std::move(levels_plan.text);
  std::shared_ptr<Store> group;
  const driver::FormatDriver& d = DriverOf(format);
  if (d.HasMultiscaleRoot() && create_group) {
    // The root first (an OME-Zarr group): the image opens (with its levels growing) while it streams.
    if (options.discard) {
      group = std::make_shared<NullStore>();
    } else {
      TESSERA_ASSIGN_OR_RETURN(group, OpenLocationStore(location, /*create=*/true));
    }
    TESSERA_RETURN_IF_ERROR(d.CreateMultiscaleRoot(s, location, *group));
  }
  std::vector<std::unique_ptr<Stream>> levels;
  for (int k = 0; k < s.level_count(); ++k) {
    Result<std::unique_ptr<Stream>> level = open_level(LevelSpec(s, format, k), d.LevelLocation(location, k));
    if (!level.ok()) {
      // The stream never opened: the root it created goes too, so CreateStream leaves no image.
      AbortLevels(levels);
      if (group) (void)d.AbandonMultiscaleRoot(*group);
      return level.status();
    }
    levels.push_back(std::move(level).value());
  }
  return std::unique_ptr<Stream>(
      new PyramidStream(format, s, location, std::move(levels), std::move(down), std::move(group), std::move(plan)));
}

}  // namespace tessera::api_internal
