#include "tessera/api/stream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tessera/api/append_stream.h"
#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/spec/spec_error.h"
#include "tessera/api/stream_lifecycle.h"
#include "tessera/api/pyramid_stream.h"
#include "tessera/core/parallel.h"
#include "tessera/driver/driver_support.h"

namespace tessera {

namespace {

// The memory plan's line for the write-behind queue of a stream to an object store.
std::string UploadQueueLine(int64_t bytes) {
  if (bytes == 0) return "";
  char line[96];
  std::snprintf(line, sizeof line, "  upload queue:           %.1f MiB (object store; on top of the peak)\n",
                static_cast<double>(bytes) / (1 << 20));
  return line;
}

// The Stream of one array (one level): a format driver's writer plus the lifecycle every format
// shares (a pyramid's PyramidStream holds one per level).
class SingleLevelStream final : public api_internal::LifecycleStream {
 public:
  SingleLevelStream(Format format, ArraySpec spec, int threads, driver::FormatWriter writer, int64_t first_row,
                    int64_t stored_rows)
      : LifecycleStream(format, std::move(spec)), threads_(threads), w_(std::move(writer)), first_row_(first_row),
        stored_rows_(stored_rows) {}
  ~SingleLevelStream() override { Abort(); }

  Status Append(ByteView bytes) override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("Append"));
    return FailOnError(w_.writer->Append(bytes));
  }

  Result<int64_t> AppendFrom(const stream::StreamWriter::ReadFn& read) override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("AppendFrom"));
    Result<int64_t> taken = w_.writer->AppendFrom(read);
    if (!taken.ok()) return FailOnError(taken.status());
    return taken;
  }

  Status Flush() override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("Flush"));
    TESSERA_RETURN_IF_ERROR(FailOnError(w_.writer->Flush()));
    TESSERA_RETURN_IF_ERROR(PublishPendingAttributes());
    return w_.sync ? FailOnError(w_.sync()) : Status::Ok();
  }

  Status Close() override {
    TESSERA_RETURN_IF_ERROR(CheckOpen("Close"));
    TESSERA_RETURN_IF_ERROR(PublishPendingAttributes());  // Close republishes them with the final shape
    TESSERA_RETURN_IF_ERROR(FailOnError(w_.writer->Close()));
    TESSERA_RETURN_IF_ERROR(FailOnError(w_.finish()));
    MarkClosed();
    return Status::Ok();
  }

  StreamStatistics stats() const override {
    const stream::StreamStats s = w_.writer->stats();
    StreamStatistics out;
    out.bytes_in = s.bytes_in;
    out.bytes_out = s.bytes_out;
    out.rows_published = std::max(stored_rows_, first_row_ + s.rows_published);
    out.shards_written = s.shards_written;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return out;
  }

  int64_t row_bytes() const override {
    const stream::StreamLayout& l = w_.writer->layout();
    return l.row_elements * l.item_bytes;
  }
  std::string DescribePlan() const override {
    return stream::DescribePlan(w_.writer->layout(), threads_) + UploadQueueLine(w_.upload_queue_bytes) +
           w_.writer->DescribeBackendPlan();
  }

 private:
  bool TakesAttributes() const override { return w_.set_attributes != nullptr; }
  Status ApplyAttributes(const nlohmann::json& attributes) override { return w_.set_attributes(attributes); }

  void Abandon() override {
    w_.writer->Abort();  // no worker may store or publish anything after this
    w_.abandon();
  }

  const int threads_;
  driver::FormatWriter w_;
  const int64_t first_row_;    // the array's row the writer's row 0 is (mode a)
  const int64_t stored_rows_;  // the rows the array had published before (mode a)
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

namespace api_internal {
std::unique_ptr<Stream> MakeFormatStream(Format format, const ArraySpec& spec, int threads, driver::FormatWriter writer,
                                         int64_t first_row, int64_t stored_rows) {
  return std::make_unique<SingleLevelStream>(format, spec, threads, std::move(writer), first_row, stored_rows);
}
}  // namespace api_internal

namespace api_internal {

driver::WriterSettings SettingsOf(const StreamOptions& options, int threads) {
  driver::WriterSettings settings;
  settings.threads = threads;
  settings.backend = options.backend;
  settings.discard = options.discard;
  settings.pool = options.pool;
  settings.input_buffers = options.input_buffers;
  return settings;
}

Result<Resolved> Resolve(const std::string& location, const ArraySpec& spec, const StreamOptions& options) {
  Resolved r;
  TESSERA_ASSIGN_OR_RETURN(r.location, ParseLocation(location, options.storage));
  r.format = options.format ? *options.format : FormatFromName(r.location);
  TESSERA_ASSIGN_OR_RETURN(r.spec, ResolveSpec(spec, r.format));
  if (options.backend == stream::Backend::kCuda && r.spec.reorders_arrival())
    return FieldError(ErrorKind::kUnsupported, "arrival_order",
                      "the cuda backend takes the input in stored order (use the cpu backend)");
  if (options.threads < 0) return FieldError(ErrorKind::kInvalidArgument, "threads", "must be >= 0 (0: hardware threads), not " +
                                                  std::to_string(options.threads));
  r.threads = options.pool ? options.pool->size() : options.threads > 0 ? options.threads : DefaultThreadCount();
  TESSERA_RETURN_IF_ERROR(DriverOf(r.format).CheckWriterSettings(SettingsOf(options, r.threads)));
  return r;
}

Status PrepareForStream(const Resolved& r, Mode mode) {
  if (mode == Mode::kAppend) {
    // CreateStream found no array to continue (ArrayToContinue): nothing there, or a precomputed
    // volume without the spec's scale, which the stream adds beside the others.
    StreamOptions as_resolved;
    as_resolved.format = r.format;
    TESSERA_ASSIGN_OR_RETURN(std::optional<Format> continued, ArrayToContinue(r.location, r.spec, as_resolved));
    if (continued) return FailedPrecondition(r.location.ToString() + ": an array to continue appeared meanwhile");
    return Status::Ok();
  }
  if (mode != Mode::kCreate && mode != Mode::kOverwrite)
    return InvalidArgument("mode " + std::string(ModeName(mode)) + ": a stream creates (w-, w) or appends (a)");
  return PrepareToCreate(r.location, r.format, mode);
}

Result<driver::FormatWriter> OpenLevelWriter(Format format, const ArraySpec& spec, const Location& location,
                                             const StreamOptions& options, int threads) {
  const driver::FormatDriver& d = DriverOf(format);
  // A directory this call creates is removed again if the stream cannot be opened (a CUDA
  // backend without a device, say), so a failed CreateStream leaves nothing behind.
  std::error_code ec;
  const bool created_here = !d.single_object() && !options.discard && location.is_file() &&
                            !std::filesystem::exists(location.path, ec);
  Result<driver::FormatWriter> w = d.OpenWriter(spec, location, SettingsOf(options, threads));
  if (w.ok() && spec.reorders_arrival()) {
    // The input arrives in the spec's order: scattered into the stored tiles as it comes.
    if (Status st = w->writer->SetArrivalOrder(spec.arrival_order); !st.ok()) {
      w->writer->Abort();
      if (w->abandon) w->abandon();
      w = st;
    }
  }
  if (!w.ok() && created_here) std::filesystem::remove_all(location.path, ec);
  return w;
}

}  // namespace api_internal

Result<std::unique_ptr<Stream>> CreateStream(const std::string& location, const ArraySpec& spec,
                                             const StreamOptions& options) {
  StreamOptions o = options;
  if (options.mode == Mode::kAppend && !options.discard) {
    // An array to continue takes its stored spec (the caller's may give only some fields).
    TESSERA_ASSIGN_OR_RETURN(const Location where, ParseLocation(location, options.storage));
    TESSERA_ASSIGN_OR_RETURN(std::optional<Format> stored, api_internal::ArrayToContinue(where, spec, options));
    if (stored && spec.reorders_arrival())
      return FieldError(ErrorKind::kUnsupported, "arrival_order",
                        "continuing an array (mode a) takes rows in stored order");
    if (stored) return api_internal::ContinueStream(where, *stored, spec, options);
    // A scale added to a precomputed volume is of the volume's format, named or not.
    if (!o.format) {
      TESSERA_ASSIGN_OR_RETURN(o.format, api_internal::StoredFormatAt(where));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(api_internal::Resolved r, api_internal::Resolve(location, spec, o));
  // What is there already is refused (w-) or removed (w) before anything is written.
  if (!options.discard) TESSERA_RETURN_IF_ERROR(api_internal::PrepareForStream(r, options.mode));
  auto open_level = [&](const ArraySpec& level, const Location& where) -> Result<std::unique_ptr<Stream>> {
    TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter w,
                             api_internal::OpenLevelWriter(r.format, level, where, options, r.threads));
    return api_internal::MakeFormatStream(r.format, level, r.threads, std::move(w));
  };
  if (r.spec.multiscale())
    return api_internal::CreatePyramidStream(r.format, r.spec, r.location, options, r.threads, open_level);
  return open_level(r.spec, r.location);
}

Result<std::string> PlanStream(const std::string& location, const ArraySpec& spec, const StreamOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(api_internal::Resolved r, api_internal::Resolve(location, spec, options));
  // The plan of a stream CreateStream would refuse (w-: something exists there) is that refusal.
  if (!options.discard && options.mode == Mode::kCreate) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> what, api_internal::WhatExistsAt(r.location, r.format));
    if (what) return api_internal::ExistsError(r.location, *what);
  }
  if (r.spec.multiscale()) {
    if (options.backend == stream::Backend::kCuda)
      return Unsupported("plan: a pyramid's plan is printed for the CPU backend only");
    return api_internal::PlanPyramid(r.format, r.spec, r.threads);
  }
  const driver::FormatDriver& d = DriverOf(r.format);
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, d.Plan(r.spec, r.threads));
  TESSERA_RETURN_IF_ERROR(stream::ApplyArrivalOrder(&layout, r.spec.arrival_order));
  std::string text = stream::DescribePlan(layout, r.threads);
  if (!options.discard && d.UsesUploadQueue(r.location)) text += UploadQueueLine(driver::UploadQueueBytes(layout));
  if (options.backend == stream::Backend::kCuda) {
    // The GPU plan needs the device (nvcomp sizes its workspaces): open a writer that stores nothing.
    StreamOptions probe = options;
    probe.discard = true;
    TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter w,
                             api_internal::OpenLevelWriter(r.format, r.spec, r.location, probe, r.threads));
    text += w.writer->DescribeBackendPlan();
    w.writer->Abort();
  }
  return text;
}

}  // namespace tessera
