// `tessera stream OUT ...`: raw little-endian C-order bytes in, a chunked array out, through the
// streaming writer (bounded memory, shards emitted as they complete).
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <functional>
#include <iostream>

#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/stream/synthetic.h"
#include "tessera/core/parallel.h"
#include "tessera/store/null_store.h"
#include "tessera/stream/zarr_stream.h"
#include "tessera/precomputed/precomputed_stream.h"
#include "tessera/hdf5/hdf5_stream.h"

namespace tessera::cli {
namespace {

struct StreamArgs {
  std::string out;
  std::string format = "zarr3";
  std::string dtype;
  std::string shape;
  std::string chunk;
  std::string shard_chunks;
  std::string codec;  // empty: the format's default (zarr3: zstd, precomputed: none)
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
  // --format precomputed
  std::string encoding = "raw";
  std::string hash = "identity";
  std::string resolution = "1,1,1";
  std::string voxel_offset = "0,0,0";
  std::string cseg_block = "8,8,8";
  std::string scale_key = "s0";
  // --format hdf5
  std::string dataset = "/data";
  bool shuffle = false;
  bool fletcher32 = false;
  std::vector<std::string> attributes;  // NAME=VALUE
};

// A running stream of either format: the writer plus what to do when it ends.
struct OpenedStream {
  stream::StreamWriter* writer = nullptr;
  std::function<Status()> abandon;  // a failed stream must not look like a valid array
  std::function<Status()> finish;   // after a successful Close
  std::shared_ptr<void> keep_alive;
};

// What every format takes from --dtype, --shape, --chunk and --shard-chunks.
struct Geometry {
  DataType dtype = DataType::kUInt8;
  std::vector<int64_t> shape, chunk, shard_chunks;  // shard_chunks empty: unsharded
};

Result<Geometry> ParseGeometry(const StreamArgs& a) {
  Geometry g;
  TESSERA_ASSIGN_OR_RETURN(g.dtype, ParseDataType(a.dtype));
  TESSERA_ASSIGN_OR_RETURN(g.shape, ParseIntList(a.shape, "--shape"));
  if (a.chunk.empty()) {
    if (a.format != "hdf5") return InvalidArgument("--chunk is required for --format " + a.format);
  } else {
    TESSERA_ASSIGN_OR_RETURN(g.chunk, ParseIntList(a.chunk, "--chunk"));
  }
  if (!a.shard_chunks.empty()) {
    TESSERA_ASSIGN_OR_RETURN(g.shard_chunks, ParseIntList(a.shard_chunks, "--shard-chunks"));
  }
  return g;
}

Result<std::array<int64_t, 3>> ParseXyz(const std::string& text, const std::string& option) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList(text, option));
  if (v.size() != 3) return InvalidArgument(option + " needs three values X,Y,Z");
  return std::array<int64_t, 3>{v[0], v[1], v[2]};
}

Result<precomputed::PrecomputedOptions> ParsePrecomputedOptions(const StreamArgs& a) {
  precomputed::PrecomputedOptions o;
  TESSERA_ASSIGN_OR_RETURN(Geometry g, ParseGeometry(a));
  o.dtype = g.dtype;
  o.shape = std::move(g.shape);
  o.chunk_shape = std::move(g.chunk);
  o.shard_chunks = std::move(g.shard_chunks);
  if (!a.codec.empty() && a.codec != "none" && a.codec != "gzip")
    return InvalidArgument("--codec " + a.codec + ": precomputed shards support none or gzip");
  o.gzip = a.codec == "gzip";
  if (a.encoding == "raw") {
    o.encoding = precomputed::ChunkEncoding::kRaw;
  } else if (a.encoding == "compressed_segmentation") {
    o.encoding = precomputed::ChunkEncoding::kCompressedSegmentation;
  } else {
    return InvalidArgument("--encoding must be raw or compressed_segmentation, not " + a.encoding);
  }
  if (a.hash == "identity") {
    o.hash = precomputed::ShardHash::kIdentity;
  } else if (a.hash == "murmurhash3_x86_128") {
    o.hash = precomputed::ShardHash::kMurmurHash3_x86_128;
  } else {
    return InvalidArgument("--hash must be identity or murmurhash3_x86_128, not " + a.hash);
  }
  using Xyz = std::array<int64_t, 3>;
  TESSERA_ASSIGN_OR_RETURN(Xyz res, ParseXyz(a.resolution, "--resolution"));
  for (int d = 0; d < 3; ++d) o.resolution_xyz[d] = static_cast<double>(res[d]);
  TESSERA_ASSIGN_OR_RETURN(o.voxel_offset_xyz, ParseXyz(a.voxel_offset, "--voxel-offset"));
  TESSERA_ASSIGN_OR_RETURN(o.cseg_block_xyz, ParseXyz(a.cseg_block, "--cseg-block"));
  if (a.scale_key.empty() || a.scale_key.find("..") != std::string::npos || a.scale_key.front() == '/')
    return InvalidArgument("--scale-key must be a relative directory name, not \"" + a.scale_key + "\"");
  o.key = a.scale_key;
  return o;
}

Result<hdf5::Hdf5StreamOptions> ParseHdf5Options(const StreamArgs& a) {
  hdf5::Hdf5StreamOptions o;
  TESSERA_ASSIGN_OR_RETURN(Geometry g, ParseGeometry(a));
  if (!g.shard_chunks.empty()) return InvalidArgument("--shard-chunks: HDF5 datasets are not sharded");
  o.dataset = a.dataset;
  o.dtype = g.dtype;
  o.shape = std::move(g.shape);
  o.chunk_shape = std::move(g.chunk);
  if (!a.codec.empty() && a.codec != "none" && a.codec != "gzip")
    return InvalidArgument("--codec " + a.codec + ": HDF5 datasets support none or gzip (the deflate filter)");
  if (a.codec == "gzip") o.deflate_level = a.level == -1000 ? 4 : a.level;
  o.shuffle = a.shuffle;
  o.fletcher32 = a.fletcher32;
  if (!a.fill_value.empty()) {
    Result<nlohmann::json> fv = zarr::ParseJsonDocument(a.fill_value, "--fill-value");
    TESSERA_ASSIGN_OR_RETURN(o.fill, ParseFillValue(o.dtype, fv.ok() ? *fv : nlohmann::json(a.fill_value)));
  }
  for (const std::string& kv : a.attributes) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument("--attribute wants NAME=VALUE, not \"" + kv + "\"");
    o.attributes.push_back(hdf5::Attribute::Parse(kv.substr(0, eq), kv.substr(eq + 1)));
  }
  return o;
}

Result<zarr::ArrayOptions> ParseArrayOptions(const StreamArgs& a) {
  zarr::ArrayOptions o;
  TESSERA_ASSIGN_OR_RETURN(Geometry g, ParseGeometry(a));
  o.dtype = g.dtype;
  o.shape = std::move(g.shape);
  o.chunk_shape = std::move(g.chunk);
  o.chunks_per_shard = std::move(g.shard_chunks);
  o.codec = a.codec.empty() ? "zstd" : a.codec;
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
  TESSERA_ASSIGN_OR_RETURN(stream::Backend backend, stream::ParseBackend(a.backend));
  const int threads = a.threads > 0 ? a.threads : DefaultThreadCount();
  stream::StreamWriterOptions wo;
  wo.threads = threads;
  wo.backend = backend;
  const bool zarr = a.format == "zarr3";
  zarr::ArrayOptions zarr_options;
  precomputed::PrecomputedOptions pre_options;
  hdf5::Hdf5StreamOptions h5_options;
  const bool h5 = a.format == "hdf5";
  stream::StreamLayout layout;
  std::vector<int64_t> shape;
  if (zarr) {
    TESSERA_ASSIGN_OR_RETURN(zarr_options, ParseArrayOptions(a));
    TESSERA_ASSIGN_OR_RETURN(layout, stream::PlanZarrStream(zarr_options, threads));
    shape = zarr_options.shape;
  } else if (a.format == "precomputed") {
    TESSERA_ASSIGN_OR_RETURN(pre_options, ParsePrecomputedOptions(a));
    TESSERA_ASSIGN_OR_RETURN(precomputed::PrecomputedPlan plan, precomputed::PlanPrecomputedStream(pre_options, threads));
    layout = plan.layout;
    shape = pre_options.shape;
  } else if (h5) {
    TESSERA_ASSIGN_OR_RETURN(h5_options, ParseHdf5Options(a));
    if (backend != stream::Backend::kCpu) return Unsupported("--backend cuda: HDF5 streams are filtered on the CPU");
    if (a.sink != "file") return Unsupported("--sink " + a.sink + ": HDF5 streams write a file");
    TESSERA_ASSIGN_OR_RETURN(layout, hdf5::PlanHdf5Stream(h5_options, threads));
    shape = h5_options.shape;
  } else {
    return Unsupported("--format " + a.format + " (supported: zarr3, precomputed, hdf5)");
  }
  // Opens the store and the stream of the chosen format.
  auto open = [&](std::shared_ptr<Store> store) -> Result<OpenedStream> {
    OpenedStream out;
    if (h5) {
      struct Held {
        std::unique_ptr<hdf5::H5Writer> file;
        hdf5::Hdf5Stream stream;
      };
      auto held = std::make_shared<Held>();
      TESSERA_ASSIGN_OR_RETURN(held->file, hdf5::H5Writer::Create(a.out));
      TESSERA_ASSIGN_OR_RETURN(held->stream, hdf5::OpenHdf5Stream(held->file.get(), h5_options, wo));
      out.writer = held->stream.writer.get();
      out.abandon = [held] {
        held->file->Abandon();
        return Status::Ok();
      };
      out.finish = [held] { return held->file->Close(); };
      out.keep_alive = held;
    } else if (zarr) {
      TESSERA_ASSIGN_OR_RETURN(stream::ZarrStream zs, stream::OpenZarrStream(store, "", zarr_options, wo));
      auto held = std::make_shared<stream::ZarrStream>(std::move(zs));
      out.writer = held->writer.get();
      out.abandon = [held] { return held->sink->Abandon(); };
      out.finish = [] { return Status::Ok(); };
      out.keep_alive = held;
    } else {
      TESSERA_ASSIGN_OR_RETURN(precomputed::PrecomputedStream ps,
                               precomputed::OpenPrecomputedStream(store, pre_options, wo));
      auto held = std::make_shared<precomputed::PrecomputedStream>(std::move(ps));
      out.writer = held->writer.get();
      out.abandon = [held] { return held->sink->Abandon(); };
      out.finish = [held] { return held->sink->Finish(); };
      out.keep_alive = held;
    }
    return out;
  };
  if (a.plan) {
    std::cout << stream::DescribePlan(layout, threads);
    if (backend == stream::Backend::kCuda) {  // the GPU plan needs the device (nvcomp sizes its workspaces)
      TESSERA_ASSIGN_OR_RETURN(OpenedStream probe, open(std::make_shared<NullStore>()));
      std::cout << probe.writer->DescribeBackendPlan();
    }
    return Status::Ok();
  }
  const bool unbounded = shape[0] == 0;
  const int64_t row_bytes = layout.row_elements * layout.item_bytes;
  const uint64_t expected = static_cast<uint64_t>(row_bytes) * static_cast<uint64_t>(shape[0]);

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
  } else if (!h5) {  // an HDF5 stream writes the file OUT itself
    TESSERA_ASSIGN_OR_RETURN(store, OpenFileStore(a.out, true));
  }
  TESSERA_ASSIGN_OR_RETURN(OpenedStream zs, open(store));
  if (backend == stream::Backend::kCuda && (a.progress || ::isatty(STDERR_FILENO)))
    std::cerr << zs.writer->DescribeBackendPlan();
  auto fail = [&](const Status& st) {
    zs.writer->Abort();    // no worker may publish metadata after this point
    (void)zs.abandon();    // a failed stream must not look like a valid array
    return st;
  };
  ProgressLine progress(a.progress || ::isatty(STDERR_FILENO), row_bytes);
  // The input is read straight into the writer's epoch buffers, at most kReadBytes per call so
  // the progress line moves.
  constexpr size_t kReadBytes = size_t{8} << 20;
  constexpr size_t kSyntheticReadBytes = size_t{64} << 20;
  int64_t fed = 0;
  auto read = [&](MutableByteView dst) -> Result<size_t> {
    size_t got;
    if (synthetic) {
      // Whole rows only (the writer's free space is always whole rows when fed whole rows), at
      // least one row per call even when a row is larger than kSyntheticReadBytes, generated on
      // all threads so the generator is not what a benchmark measures.
      const int64_t cap = std::max<int64_t>(static_cast<int64_t>(kSyntheticReadBytes), row_bytes);
      const int64_t rows = std::min<int64_t>(std::min<int64_t>(static_cast<int64_t>(dst.size()), cap) / row_bytes,
                                             shape[0] - fed / row_bytes);
      if (rows <= 0) return size_t{0};
      stream::FillSyntheticParallel(*synthetic, layout.dtype, layout.row_elements, fed / layout.item_bytes,
                                    rows * layout.row_elements, dst.data(), threads);
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
  st = zs.finish();
  if (!st.ok()) return fail(st);
  return Status::Ok();
}

}  // namespace

void RegisterStream(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<StreamArgs>();
  CLI::App* cmd = app.add_subcommand("stream", "Stream raw little-endian C-order bytes into a chunked array");
  cmd->add_option("OUT", args->out, "Output store (directory; a file for hdf5)")->required();
  cmd->add_option("--format", args->format, "Output format: zarr3 (default), precomputed or hdf5")
      ->check(CLI::IsMember({"zarr3", "precomputed", "hdf5"}));
  cmd->add_option("--dtype", args->dtype, "Element type (uint16, float32, ...)")->required();
  cmd->add_option("--shape", args->shape, "S0,S1,... (S0 = 0: unbounded along dimension 0)")->required();
  cmd->add_option("--chunk", args->chunk, "C0,C1,... chunk shape (hdf5: default about 1 MiB, proportional to the shape)");
  cmd->add_option("--shard-chunks", args->shard_chunks, "P0,P1,... chunks per shard (default: unsharded)");
  cmd->add_option("--codec", args->codec, "none|zstd|gzip|blosc-lz4|blosc-zstd (default: zstd for zarr3, none for precomputed and hdf5; hdf5: none or gzip, level default 4)")
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
  cmd->add_option("--encoding", args->encoding, "precomputed: raw (default) or compressed_segmentation");
  cmd->add_option("--hash", args->hash, "precomputed sharding: identity (default) or murmurhash3_x86_128");
  cmd->add_option("--resolution", args->resolution, "precomputed: voxel size X,Y,Z in nm (default 1,1,1)");
  cmd->add_option("--voxel-offset", args->voxel_offset, "precomputed: X,Y,Z of the first voxel (default 0,0,0)");
  cmd->add_option("--scale-key", args->scale_key,
                  "precomputed: the scale's directory (default s0); an existing volume's other scales are kept");
  cmd->add_option("--cseg-block", args->cseg_block, "precomputed: compressed_segmentation block X,Y,Z (default 8,8,8)");
  cmd->add_option("--dataset", args->dataset, "hdf5: the dataset's path in the file (default /data; groups are created)");
  cmd->add_flag("--shuffle", args->shuffle, "hdf5: the shuffle filter before deflate");
  cmd->add_flag("--fletcher32", args->fletcher32, "hdf5: a fletcher32 checksum per chunk");
  cmd->add_option("--attribute", args->attributes, "hdf5: NAME=VALUE attribute on the dataset (integer, float or string; repeatable)");
  cmd->add_flag("--plan", args->plan, "Print the layout and memory plan, then exit without writing");
  cmd->add_flag("--progress", args->progress, "Print a progress line on stderr (default: when stderr is a terminal)");
  cmd->callback([args, exit_code] {
    Status st = RunStream(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
