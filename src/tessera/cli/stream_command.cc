// `tessera stream OUT ...`: raw little-endian C-order bytes in, a chunked array out, through the
// streaming writer (bounded memory, shards emitted as they complete).
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/stream/synthetic.h"
#include "tessera/core/parallel.h"
#include "tessera/store/null_store.h"
#include "tessera/stream/zarr_stream.h"

namespace tessera::cli {
namespace {

struct StreamArgs {
  std::string out;
  std::string format = "zarr3";
  std::string dtype;
  std::string shape;
  std::string chunk;
  std::string shard_chunks;
  std::string codec = "zstd";
  int level = -1000;
  std::string index_location = "end";
  std::string input = "-";
  std::string fill_value;  // empty: the dtype's zero
  std::string synthetic;
  std::string backend = "cpu";
  std::string sink = "file";
  int threads = 0;
  bool plan = false;
  bool progress = false;
};

Result<zarr::ArrayOptions> ParseArrayOptions(const StreamArgs& a) {
  zarr::ArrayOptions o;
  TESSERA_ASSIGN_OR_RETURN(o.dtype, ParseDataType(a.dtype));
  TESSERA_ASSIGN_OR_RETURN(o.shape, ParseIntList(a.shape, "--shape"));
  TESSERA_ASSIGN_OR_RETURN(o.chunk_shape, ParseIntList(a.chunk, "--chunk"));
  if (!a.shard_chunks.empty()) {
    TESSERA_ASSIGN_OR_RETURN(o.chunks_per_shard, ParseIntList(a.shard_chunks, "--shard-chunks"));
  }
  o.codec = a.codec;
  if (a.level != -1000) o.level = a.level;
  if (a.index_location != "start" && a.index_location != "end")
    return InvalidArgument("--index-location must be start or end");
  o.index_location = a.index_location == "start" ? IndexLocation::kStart : IndexLocation::kEnd;
  if (!a.fill_value.empty()) {
    Result<nlohmann::json> fv = zarr::ParseJsonDocument(a.fill_value, "--fill-value");
    o.fill_value = fv.ok() ? *fv : nlohmann::json(a.fill_value);  // NaN, Infinity, 0x... as strings
  }
  return o;
}

// Prints "\r<GB> GB  <GB/s> GB/s  <frames> frames  ratio <x>" at most every 0.5 s.
class ProgressLine {
 public:
  ProgressLine(bool enabled, int64_t frame_bytes) : enabled_(enabled), frame_bytes_(frame_bytes) {}
  void Update(const stream::StreamStats& s, bool final) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (!final && now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double ratio = s.bytes_out > 0 ? static_cast<double>(s.bytes_in) / static_cast<double>(s.bytes_out) : 0.0;
    std::fprintf(stderr, "\r%.3f GB  %.2f GB/s  %lld frames  ratio %.2f%s", s.bytes_in / 1e9,
                 secs > 0 ? s.bytes_in / 1e9 / secs : 0.0, static_cast<long long>(s.bytes_in / frame_bytes_), ratio,
                 final ? "\n" : "   ");
  }

 private:
  bool enabled_;
  int64_t frame_bytes_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

Status RunStream(const StreamArgs& a) {
  if (a.format != "zarr3") return Unsupported("--format " + a.format + " (supported: zarr3)");
  TESSERA_ASSIGN_OR_RETURN(stream::Backend backend, stream::ParseBackend(a.backend));
  TESSERA_ASSIGN_OR_RETURN(zarr::ArrayOptions o, ParseArrayOptions(a));
  const int threads = a.threads > 0 ? a.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, stream::PlanZarrStream(o, threads));
  stream::StreamWriterOptions wo;
  wo.threads = threads;
  wo.backend = backend;
  if (a.plan) {
    std::cout << stream::DescribePlan(layout, threads);
    if (backend == stream::Backend::kCuda) {  // the GPU plan needs the device (nvcomp sizes its workspaces)
      TESSERA_ASSIGN_OR_RETURN(stream::ZarrStream probe,
                               stream::OpenZarrStream(std::make_shared<NullStore>(), "", o, wo));
      std::cout << probe.writer->DescribeBackendPlan();
    }
    return Status::Ok();
  }
  const bool unbounded = o.shape[0] == 0;
  const int64_t row_bytes = layout.row_elements * layout.item_bytes;
  const uint64_t expected = static_cast<uint64_t>(row_bytes) * static_cast<uint64_t>(o.shape[0]);

  std::optional<stream::SyntheticKind> synthetic;
  if (!a.synthetic.empty()) {
    TESSERA_ASSIGN_OR_RETURN(synthetic, stream::ParseSyntheticKind(a.synthetic));
    if (unbounded) return InvalidArgument("--synthetic needs a bounded shape (S0 > 0)");
  }
  std::optional<CFile> in;
  if (!synthetic) {
    TESSERA_ASSIGN_OR_RETURN(CFile f, CFile::Open(a.input, false));
    in.emplace(std::move(f));
    // A bounded array from a regular file: check the size before writing anything.
    struct stat st;
    if (!unbounded && a.input != "-" && ::stat(a.input.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<uint64_t>(st.st_size) != expected)
      return InvalidArgument("input " + a.input + " has " + std::to_string(st.st_size) + " bytes but shape " + a.shape +
                             " of " + a.dtype + " needs " + std::to_string(expected));
  }
  std::shared_ptr<Store> store;
  if (a.sink == "discard") {
    store = std::make_shared<NullStore>();
  } else {
    TESSERA_ASSIGN_OR_RETURN(store, OpenFileStore(a.out, true));
  }
  TESSERA_ASSIGN_OR_RETURN(stream::ZarrStream zs, stream::OpenZarrStream(store, "", o, wo));
  if (backend == stream::Backend::kCuda && (a.progress || ::isatty(STDERR_FILENO)))
    std::cerr << zs.writer->DescribeBackendPlan();
  auto fail = [&](const Status& st) {
    zs.writer->Abort();        // no worker may publish zarr.json after this point
    (void)zs.sink->Abandon();  // a failed stream must not look like a valid array
    return st;
  };
  ProgressLine progress(a.progress || ::isatty(STDERR_FILENO), row_bytes);
  // The input is read straight into the writer's epoch buffers, at most kReadBytes per call so
  // the progress line moves.
  constexpr size_t kReadBytes = size_t{8} << 20;
  int64_t fed = 0;
  auto read = [&](MutableByteView dst) -> Result<size_t> {
    size_t got;
    if (synthetic) {
      // Whole rows only (the writer's free space is always whole rows when fed whole rows).
      const int64_t rows = std::min<int64_t>(static_cast<int64_t>(std::min(dst.size(), kReadBytes)) / row_bytes,
                                             o.shape[0] - fed / row_bytes);
      if (rows <= 0) return size_t{0};
      stream::FillSynthetic(*synthetic, o.dtype, layout.row_elements, fed / layout.item_bytes,
                            rows * layout.row_elements, dst.data());
      got = static_cast<size_t>(rows * row_bytes);
    } else {
      TESSERA_ASSIGN_OR_RETURN(got, in->ReadFully(dst.data(), std::min(dst.size(), kReadBytes)));
    }
    fed += static_cast<int64_t>(got);
    progress.Update(zs.writer->stats(), false);
    return got;
  };
  Result<int64_t> taken = zs.writer->AppendFrom(read);
  if (!taken.ok()) return fail(taken.status());
  if (!unbounded && !synthetic && static_cast<uint64_t>(fed) == expected) {
    // The array is complete: anything left in the input is an error, not silently ignored.
    uint8_t extra;
    Result<size_t> more = in->ReadFully(&extra, 1);
    if (!more.ok()) return fail(more.status());
    if (*more > 0)
      return fail(InvalidArgument("input has more than the " + std::to_string(expected) + " bytes shape " + a.shape +
                                  " of " + a.dtype + " needs"));
  }
  Status st = zs.writer->Close();
  progress.Update(zs.writer->stats(), true);
  if (!st.ok()) return fail(st.WithContext("input " + (synthetic ? std::string("(synthetic)") : in->path())));
  return Status::Ok();
}

}  // namespace

void RegisterStream(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<StreamArgs>();
  CLI::App* cmd = app.add_subcommand("stream", "Stream raw little-endian C-order bytes into a chunked array");
  cmd->add_option("OUT", args->out, "Output store (directory)")->required();
  cmd->add_option("--format", args->format, "Output format")->check(CLI::IsMember({"zarr3"}));
  cmd->add_option("--dtype", args->dtype, "Element type (uint16, float32, ...)")->required();
  cmd->add_option("--shape", args->shape, "S0,S1,... (S0 = 0: unbounded along dimension 0)")->required();
  cmd->add_option("--chunk", args->chunk, "C0,C1,... chunk shape")->required();
  cmd->add_option("--shard-chunks", args->shard_chunks, "P0,P1,... chunks per shard (default: unsharded)");
  cmd->add_option("--codec", args->codec, "none|zstd|gzip|blosc-lz4|blosc-zstd")
      ->check(CLI::IsMember({"none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"}));
  cmd->add_option("--level", args->level, "Compression level");
  cmd->add_option("--index-location", args->index_location, "Shard index location: start|end");
  cmd->add_option("--input", args->input, "Input file, or - for stdin");
  cmd->add_option("--fill-value", args->fill_value, "Fill value (JSON: 0, 1.5, true, \"NaN\", [re,im]; default: zero)");
  cmd->add_option("--synthetic", args->synthetic, "Generate the input instead: camera|zeros|random");
  cmd->add_option("--backend", args->backend, "Pipeline backend: cpu (default) or cuda (codecs none, zstd, gzip)");
  cmd->add_option("--threads", args->threads, "Compression threads (default: hardware threads)");
  cmd->add_option("--sink", args->sink, "file (default) or discard (benchmarks: encode everything, store nothing)")
      ->check(CLI::IsMember({"file", "discard"}));
  cmd->add_flag("--plan", args->plan, "Print the layout and memory plan, then exit without writing");
  cmd->add_flag("--progress", args->progress, "Print a progress line on stderr (default: when stderr is a terminal)");
  cmd->callback([args, exit_code] {
    Status st = RunStream(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
