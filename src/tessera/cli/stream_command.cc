// `tessera stream OUT ...`: raw little-endian C-order bytes in, a chunked array out, through the
// streaming writer (bounded memory, shards emitted as they complete).
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <functional>
#include <iostream>

#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <limits>

#include "tessera/api/tessera.h"
#include "tessera/cli/cli_util.h"
#include "tessera/cli/commands.h"
#include "tessera/core/parallel.h"
#include "tessera/stream/synthetic.h"
#include "tessera/zarr/metadata.h"

namespace tessera::cli {
namespace {

constexpr int kUnsetLevel = -1000;

struct StreamArgs {
  std::string out;
  std::string format;  // empty: from OUT's name (".h5", ".hdf5", ... -> hdf5; else zarr3)
  std::string dtype;
  std::string shape;
  std::string chunk;
  std::string shard_chunks;
  std::string codec;  // empty: the format's default (zarr3: zstd, precomputed: none)
  int level = kUnsetLevel;
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
  // Pyramid and OME-Zarr image
  std::string pyramid;             // LEVELS or auto; empty: none
  std::string downsample;          // method; empty: the format's default
  std::string downsample_factors;  // F0,F1,...
  std::string axes;                // name:type[:unit],...
  std::string voxel_size;          // S0,S1,... (floats)
  bool ome = false;
};

Result<std::vector<double>> ParseDoubleList(const std::string& text, const std::string& option) {
  std::vector<double> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || errno != 0)
      return InvalidArgument(option + ": \"" + item + "\" is not a number (in \"" + text + "\")");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

Result<std::array<int64_t, 3>> ParseXyz(const std::string& text, const std::string& option) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList(text, option));
  if (v.size() != 3) return InvalidArgument(option + " needs three values X,Y,Z");
  return std::array<int64_t, 3>{v[0], v[1], v[2]};
}

// --attribute NAME=VALUE: "3", "-2" -> an integer, "1.5e3" -> a number, anything else (including
// "nan", "inf" and "0x10") -> a string.
nlohmann::json AttributeValue(const std::string& text) {
  if (text.find_first_of("0123456789") == std::string::npos) return text;
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(text.c_str(), &end, 10);
  if (*end == '\0' && errno == 0) return i;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  const bool hex = text.find_first_of("xX") != std::string::npos;
  if (*end == '\0' && errno == 0 && std::isfinite(d) && !hex) return d;
  return text;
}

// --dtype, --shape, --chunk, --shard-chunks, --codec ... as the library's ArraySpec. Only the
// command-line spelling is checked here; the spec itself is validated by the library.
Result<ArraySpec> BuildSpec(const StreamArgs& a, Format format) {
  ArraySpec s;
  TESSERA_ASSIGN_OR_RETURN(s.dtype, ParseDataType(a.dtype));
  TESSERA_ASSIGN_OR_RETURN(s.shape, ParseIntList(a.shape, "--shape"));
  if (!a.chunk.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.chunk_shape, ParseIntList(a.chunk, "--chunk"));
  } else if (format != Format::kHdf5) {
    return InvalidArgument("--chunk is required for --format " + std::string(FormatName(format)));
  }
  if (!a.shard_chunks.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.shard_chunks, ParseIntList(a.shard_chunks, "--shard-chunks"));
  }
  if (!a.codec.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.codec, ParseCodec(a.codec));
  }
  if (a.level != kUnsetLevel) s.level = a.level;
  if (!a.fill_value.empty()) {
    Result<nlohmann::json> fv = zarr::ParseJsonDocument(a.fill_value, "--fill-value");
    s.fill_value = fv.ok() ? *fv : nlohmann::json(a.fill_value);  // NaN, Infinity, 0x... as strings
  }
  if (a.index_location != "start" && a.index_location != "end")
    return InvalidArgument("--index-location must be start or end, not " + a.index_location);
  s.zarr.index_at_start = a.index_location == "start";
  // Every format's options go into the spec; the library refuses those the format does not take.
  PrecomputedSpecOptions& p = s.precomputed;
  p.encoding = a.encoding;
  p.hash = a.hash;
  p.scale_key = a.scale_key;
  using Xyz = std::array<int64_t, 3>;
  TESSERA_ASSIGN_OR_RETURN(Xyz res, ParseXyz(a.resolution, "--resolution"));
  for (int d = 0; d < 3; ++d) p.resolution_xyz[d] = static_cast<double>(res[d]);
  TESSERA_ASSIGN_OR_RETURN(p.voxel_offset_xyz, ParseXyz(a.voxel_offset, "--voxel-offset"));
  TESSERA_ASSIGN_OR_RETURN(p.cseg_block_xyz, ParseXyz(a.cseg_block, "--cseg-block"));
  s.hdf5.dataset = a.dataset;
  s.hdf5.shuffle = a.shuffle;
  s.hdf5.fletcher32 = a.fletcher32;
  if (!a.pyramid.empty()) {
    if (a.pyramid == "auto") {
      s.pyramid.levels = 0;
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> levels, ParseIntList(a.pyramid, "--pyramid"));
      if (levels.size() != 1 || levels[0] < 1) return InvalidArgument("--pyramid wants a level count >= 1 or auto, not " + a.pyramid);
      s.pyramid.levels = static_cast<int>(levels[0]);
    }
  }
  if (!a.downsample.empty()) {
    Result<pyramid::DownsampleMethod> m = pyramid::ParseDownsampleMethod(a.downsample);
    if (!m.ok()) return InvalidArgument("--downsample: " + m.status().message());
    s.pyramid.method = *m;
  }
  if (!a.downsample_factors.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.pyramid.factors, ParseIntList(a.downsample_factors, "--downsample-factors"));
  }
  if (!a.axes.empty()) {
    Result<std::vector<pyramid::OmeAxis>> axes = pyramid::ParseOmeAxes(a.axes);
    if (!axes.ok()) return RespellSpecField(axes.status(), "--axes");
    s.ome.axes = std::move(axes).value();
  }
  if (!a.voxel_size.empty()) {
    TESSERA_ASSIGN_OR_RETURN(s.ome.voxel_size, ParseDoubleList(a.voxel_size, "--voxel-size"));
  }
  s.ome.image = a.ome;
  for (const std::string& kv : a.attributes) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument("--attribute wants NAME=VALUE, not \"" + kv + "\"");
    s.attributes[kv.substr(0, eq)] = AttributeValue(kv.substr(eq + 1));
  }
  return s;
}

// Prints "\r<GB> GB  <GB/s> GB/s  <frames> frames  ratio <x>" at most every 0.5 s.
class ProgressLine {
 public:
  ProgressLine(bool enabled, int64_t frame_bytes) : enabled_(enabled), frame_bytes_(frame_bytes) {}
  void Update(const StreamStatistics& s, bool final) {
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
  Format format;
  if (a.format.empty()) {
    TESSERA_ASSIGN_OR_RETURN(Location out, ParseLocation(a.out));
    format = FormatFromName(out);
  } else {
    TESSERA_ASSIGN_OR_RETURN(format, ParseFormat(a.format));
  }
  TESSERA_ASSIGN_OR_RETURN(ArraySpec spec, BuildSpec(a, format));
  StreamOptions options;
  options.format = format;
  options.threads = a.threads > 0 ? a.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(options.backend, stream::ParseBackend(a.backend));
  options.discard = a.sink == "discard";
  if (a.plan) {
    TESSERA_ASSIGN_OR_RETURN(std::string plan, PlanStream(a.out, spec, options));
    std::cout << plan;
    return Status::Ok();
  }
  // The spec is checked before the input is looked at, so a bad option is reported as such.
  TESSERA_ASSIGN_OR_RETURN(spec, ResolveSpec(spec, format));
  const std::vector<int64_t>& shape = spec.shape;
  const bool unbounded = shape[0] == 0;
  std::optional<stream::SyntheticKind> synthetic;
  if (!a.synthetic.empty()) {
    TESSERA_ASSIGN_OR_RETURN(synthetic, stream::ParseSyntheticKind(a.synthetic));
    if (unbounded) return InvalidArgument("--synthetic needs a bounded shape (S0 > 0)");
  }
  std::optional<CFile> in;
  // The input's byte count (a bounded array); the resolved shape is positive, the product may not fit.
  unsigned __int128 needed = ItemSize(spec.dtype);
  for (int64_t v : shape) needed *= static_cast<uint64_t>(std::max<int64_t>(v, 1));
  if (needed > std::numeric_limits<uint64_t>::max())
    return OutOfRange("--shape " + a.shape + " of " + a.dtype + " needs more than 2^64 bytes");
  const uint64_t expected = unbounded ? 0 : static_cast<uint64_t>(needed);
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
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, CreateStream(a.out, spec, options));
  if (options.backend == stream::Backend::kCuda && (a.progress || ::isatty(STDERR_FILENO)))
    std::cerr << stream->DescribePlan();
  const int64_t row_bytes = stream->row_bytes();
  const DataType dtype = spec.dtype;
  const int64_t item_bytes = static_cast<int64_t>(ItemSize(dtype));
  ProgressLine progress(a.progress || ::isatty(STDERR_FILENO), row_bytes);
  // The input is read into the space the stream offers (AppendFrom), at most kReadBytes per call so the
  // progress line moves.
  constexpr size_t kReadBytes = size_t{8} << 20;
  constexpr size_t kSyntheticReadBytes = size_t{64} << 20;
  int64_t fed = 0;
  auto read = [&](MutableByteView dst) -> Result<size_t> {
    size_t got;
    if (synthetic) {
      // Whole elements, as many as fit (up to kSyntheticReadBytes per call), generated on all
      // threads so the generator is not what a benchmark measures. Any split of the stream gives
      // the same values (FillSynthetic is a function of the element index).
      const int64_t total_elements = shape[0] * (row_bytes / item_bytes);
      const int64_t n = std::min<int64_t>(std::min(dst.size(), kSyntheticReadBytes) / static_cast<size_t>(item_bytes),
                                          total_elements - fed / item_bytes);
      if (n <= 0) return size_t{0};
      stream::FillSyntheticParallel(*synthetic, dtype, row_bytes / item_bytes, fed / item_bytes, n, dst.data(),
                                    options.threads);
      got = static_cast<size_t>(n * item_bytes);
    } else {
      TESSERA_ASSIGN_OR_RETURN(got, in->ReadFully(dst.data(), std::min(dst.size(), kReadBytes)));
    }
    fed += static_cast<int64_t>(got);
    progress.Update(stream->stats(), false);
    return got;
  };
  TESSERA_RETURN_IF_ERROR(stream->AppendFrom(read).status());
  if (!unbounded && !synthetic && static_cast<uint64_t>(fed) == expected) {
    // The array is complete: anything left in the input is an error, not silently ignored.
    uint8_t extra;
    Result<size_t> more = in->ReadFully(&extra, 1);
    Status st = more.ok() && *more > 0 ? InvalidArgument("input has more than the " + std::to_string(expected) +
                                                         " bytes shape " + a.shape + " of " + a.dtype + " needs")
                                       : more.status();
    if (!st.ok()) {
      stream->Abort();
      return st;
    }
  }
  Status st = stream->Close();
  progress.Update(stream->stats(), true);
  if (!st.ok()) return st.WithContext("input " + (synthetic ? std::string("(synthetic)") : in->path()));
  return Status::Ok();
}

}  // namespace

void RegisterStream(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<StreamArgs>();
  CLI::App* cmd = app.add_subcommand("stream", "Stream raw little-endian C-order bytes into a chunked array");
  cmd->add_option("OUT", args->out, "Output store (directory; a file for hdf5)")->required();
  cmd->add_option("--format", args->format, "Output format: zarr3, precomputed or hdf5 (default: hdf5 for a .h5, .hdf5, .he5, .nc or .hdf name, else zarr3)")
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
  cmd->add_option("--synthetic", args->synthetic, "Generate the input instead: camera|zeros|random")
      ->check(CLI::IsMember({"camera", "zeros", "random"}));
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
  cmd->add_option("--attribute", args->attributes, "NAME=VALUE attribute of the array (integer, float or string; repeatable; not precomputed)");
  cmd->add_option("--pyramid", args->pyramid,
                  "LEVELS|auto: write a multiscale pyramid of LEVELS levels (auto: until every dimension fits one "
                  "chunk); zarr3: an OME-Zarr 0.5 image (levels 0, 1, ... in one group), precomputed: more scales");
  cmd->add_option("--downsample", args->downsample,
                  "Pyramid method: mean (default), min, max, median, mode (default for compressed_segmentation), stride");
  cmd->add_option("--downsample-factors", args->downsample_factors,
                  "F0,F1,... per dimension (default: 2 along space axes, 1 along time and channel)");
  cmd->add_option("--axes", args->axes,
                  "zarr3 OME-Zarr axes NAME:TYPE[:UNIT],... e.g. t:time:second,y:space:micrometer,x:space:micrometer "
                  "(default: from the dimension names, else z,y,x and c, t before them)");
  cmd->add_option("--voxel-size", args->voxel_size, "zarr3 OME-Zarr: level 0's scale per dimension (default 1)");
  cmd->add_flag("--ome", args->ome, "zarr3: write an OME-Zarr 0.5 image even without a pyramid (one level, \"0\")");
  cmd->add_flag("--plan", args->plan, "Print the layout and memory plan, then exit without writing");
  cmd->add_flag("--progress", args->progress, "Print a progress line on stderr (default: when stderr is a terminal)");
  cmd->callback([args, exit_code] {
    Status st = RunStream(*args);
    if (!st.ok()) *exit_code = ReportError(st);
  });
}

}  // namespace tessera::cli
