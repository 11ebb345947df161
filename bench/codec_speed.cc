// Measures the compressor-bound and memory-bound limits a streaming benchmark is judged against:
//   * one-core codec speed on exactly the tiles the stream produces (same data, chunk, codec)
//   * memcpy bandwidth with N threads
// Prints one JSON object. Usage:
//   codec_speed --dtype uint16 --frame 2048,2048 --chunk 32,256,256 --codec zstd --level 1
//               [--synthetic camera | --input FILE] [--epochs 2] [--memcpy-threads 2]
// --input: the epochs are the first rows of FILE (raw little-endian C-order rows of `frame`), the
// benchmark's own data, instead of synthetic rows.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tessera/codec/registry.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"
#include "tessera/index/strided_copy.h"
#include "tessera/stream/synthetic.h"
#include "tessera/zarr/array_options.h"

using namespace tessera;

namespace {

std::vector<int64_t> ParseList(const std::string& s) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    out.push_back(std::stoll(s.substr(pos, comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

double Seconds(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

double MemcpyBandwidth(int threads) {
  const size_t bytes = size_t{256} << 20;
  std::vector<uint8_t> src(bytes, 1), dst(bytes, 0);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    const size_t part = bytes / threads;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { std::memcpy(dst.data() + t * part, src.data() + t * part, part); });
    for (auto& th : pool) th.join();
    best = std::max(best, bytes / 1e9 / Seconds(t0));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dtype_name = "uint16", frame_s = "2048,2048", chunk_s = "32,256,256", codec = "zstd", synthetic = "camera";
  std::string input;
  int level = -1000, epochs = 2, memcpy_threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--dtype") dtype_name = v;
    else if (k == "--frame") frame_s = v;
    else if (k == "--chunk") chunk_s = v;
    else if (k == "--codec") codec = v;
    else if (k == "--level") level = std::stoi(v);
    else if (k == "--synthetic") synthetic = v;
    else if (k == "--input") input = v;
    else if (k == "--epochs") epochs = std::stoi(v);
    else if (k == "--memcpy-threads") memcpy_threads = std::stoi(v);
  }
  const DataType dtype = ParseDataType(dtype_name).value();
  const std::vector<int64_t> frame = ParseList(frame_s), chunk = ParseList(chunk_s);
  const int rank = static_cast<int>(chunk.size());
  std::optional<int> lvl;
  if (level != -1000) lvl = level;
  nlohmann::json codecs = nlohmann::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
  const nlohmann::json compressors = zarr::CompressorCodecs(codec, lvl, dtype).value();
  for (const auto& c : compressors) codecs.push_back(c);
  const ChunkSpec tile_spec{dtype, chunk, ZeroFill(dtype)};
  const CodecChain chain = ParseCodecChain(codecs, tile_spec).value();

  // One epoch of synthetic rows, cut into tiles exactly as the stream does.
  int64_t row_elements = 1;
  for (int64_t f : frame) row_elements *= f;
  const size_t item = ItemSize(dtype);
  const int64_t rows = chunk[0];
  std::vector<uint8_t> epoch(static_cast<size_t>(rows * row_elements) * item);
  std::vector<int64_t> epoch_shape = {rows};
  epoch_shape.insert(epoch_shape.end(), frame.begin(), frame.end());
  const index::ChunkGrid tiles(epoch_shape, chunk);
  int64_t src_strides[kMaxRank], tile_strides[kMaxRank];
  index::RowMajorStrides(rank, epoch_shape.data(), src_strides);
  index::RowMajorStrides(rank, chunk.data(), tile_strides);
  for (int d = 0; d < rank; ++d) {
    src_strides[d] *= item;
    tile_strides[d] *= item;
  }
  const int64_t ntiles = tiles.ChunkCount();
  std::vector<uint8_t> tile(tile_spec.NumBytes());
  Bytes out;
  double compress_secs = 0;
  int64_t in_bytes = 0, out_bytes = 0;
  FILE* in = input.empty() ? nullptr : std::fopen(input.c_str(), "rb");
  if (!input.empty() && !in) {
    std::fprintf(stderr, "codec_speed: cannot open %s\n", input.c_str());
    return 1;
  }
  for (int e = 0; e < epochs; ++e) {
    if (in) {
      if (std::fread(epoch.data(), 1, epoch.size(), in) != epoch.size()) break;  // the file has fewer epochs
    } else {
      stream::FillSynthetic(stream::ParseSyntheticKind(synthetic).value(), dtype, row_elements,
                            e * rows * row_elements, rows * row_elements, epoch.data());
    }
    for (int64_t i = 0; i < ntiles; ++i) {
      int64_t t[kMaxRank], origin[kMaxRank], extent[kMaxRank];
      tiles.Unravel(i, t);
      tiles.ChunkBox(t, origin, extent);
      const int64_t off = index::Dot(rank, origin, src_strides);
      std::memset(tile.data(), 0, tile.size());
      index::CopyStrided(rank, extent, epoch.data() + off, src_strides, tile.data(), tile_strides, item);
      auto t0 = std::chrono::steady_clock::now();
      if (!chain.Encode(tile_spec, tile, &out).ok()) return 1;
      compress_secs += Seconds(t0);
      in_bytes += static_cast<int64_t>(tile.size());
      out_bytes += static_cast<int64_t>(out.size());
    }
  }
  if (in) std::fclose(in);
  if (in_bytes == 0) {
    std::fprintf(stderr, "codec_speed: %s holds less than one epoch\n", input.c_str());
    return 1;
  }
  std::printf("{\"codec\": \"%s\", \"single_core_gbps\": %.4f, \"ratio\": %.3f, \"memcpy_gbps\": %.3f, \"memcpy_threads\": %d}\n",
              codec.c_str(), in_bytes / 1e9 / compress_secs, static_cast<double>(in_bytes) / out_bytes,
              MemcpyBandwidth(memcpy_threads), memcpy_threads);
  return 0;
}
