#include "tessera/read/selection_read.h"

#include <cstdint>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

#include "tessera/core/limits.h"
#include "tessera/core/parallel.h"
#include "tessera/core/text.h"
#include "tessera/index/strided_copy.h"

namespace tessera {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parses an optional integer field; empty -> nullopt.
Result<std::optional<int64_t>> ParseField(std::string_view field, std::string_view expr) {
  field = Trim(field);
  if (field.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  const char* begin = field.data();
  if (*begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, field.data() + field.size(), v);
  if (ptr != field.data() + field.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
    return InvalidArgument("slice \"" + std::string(expr) + "\": \"" + std::string(field) + "\" is not an integer");
  // Integers beyond int64 select as the nearest int64 does (numpy clamps starts and stops, and a
  // step that large selects one position either way); an index that large is out of range anyway.
  if (ec == std::errc::result_out_of_range)
    v = *begin == '-' ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  return std::optional<int64_t>(v);
}

}  // namespace

std::vector<int64_t> Hyperslab::OutputShape() const {
  std::vector<int64_t> out;
  for (size_t d = 0; d < dims.size(); ++d)
    if (!dropped[d]) out.push_back(dims[d].count);
  return out;
}

int64_t Hyperslab::NumElements() const {
  for (const auto& d : dims) {
    if (d.count == 0) return 0;
  }
  int64_t n = 1;
  for (const auto& d : dims) {
    if (__builtin_mul_overflow(n, d.count, &n)) return INT64_MAX;  // CheckSelection refuses these
  }
  return n;
}

Hyperslab Hyperslab::All(const std::vector<int64_t>& shape) {
  Hyperslab h;
  for (int64_t e : shape) h.dims.push_back(index::DimSlice{0, 1, e});
  h.dropped.assign(shape.size(), false);
  return h;
}

Result<Hyperslab> ParseSliceExpression(std::string_view expr, const std::vector<int64_t>& shape) {
  Hyperslab h;
  std::vector<std::string_view> entries;
  std::string_view rest = Trim(expr);
  if (!rest.empty()) {
    for (;;) {
      size_t comma = rest.find(',');
      entries.push_back(Trim(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    // A trailing comma ("1,") is allowed, as in numpy.
    if (entries.size() > 1 && entries.back().empty()) entries.pop_back();
  }
  // numpy's None / newaxis adds a length-1 axis to the output: the same bytes, so nothing to select.
  std::erase_if(entries, [](std::string_view e) { return e == "None" || e == "newaxis" || e == "np.newaxis"; });
  // "..." stands for as many ':' as the other entries leave dimensions (at most one of it).
  const auto ellipsis = std::find(entries.begin(), entries.end(), "...");
  if (ellipsis != entries.end()) {
    if (std::find(ellipsis + 1, entries.end(), "...") != entries.end())
      return InvalidArgument("slice \"" + std::string(expr) + "\": an index can only have a single ellipsis ('...')");
    const size_t others = entries.size() - 1;
    const size_t fill = shape.size() > others ? shape.size() - others : 0;
    const size_t at = static_cast<size_t>(ellipsis - entries.begin());
    entries.erase(ellipsis);
    entries.insert(entries.begin() + static_cast<std::ptrdiff_t>(at), fill, std::string_view(":"));
  }
  if (entries.size() > shape.size())
    return OutOfRange("slice \"" + std::string(expr) + "\" has " + std::to_string(entries.size()) +
                      " entries for an array of rank " + std::to_string(shape.size()));
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t extent = shape[d];
    if (d >= entries.size()) {
      h.dims.push_back(index::DimSlice{0, 1, extent});
      h.dropped.push_back(false);
      continue;
    }
    std::string_view e = entries[d];
    if (e.find(':') == std::string_view::npos) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> v, ParseField(e, expr));
      if (!v) return InvalidArgument("slice \"" + std::string(expr) + "\": empty entry for dimension " + std::to_string(d));
      int64_t i = *v < 0 ? *v + extent : *v;
      if (i < 0 || i >= extent)
        return OutOfRange("slice \"" + std::string(expr) + "\": index " + std::to_string(*v) +
                          " is out of range for dimension " + std::to_string(d) + " of extent " + std::to_string(extent));
      h.dims.push_back(index::DimSlice{i, 1, 1});
      h.dropped.push_back(true);
      continue;
    }
    size_t c1 = e.find(':');
    size_t c2 = e.find(':', c1 + 1);
    if (c2 != std::string_view::npos && e.find(':', c2 + 1) != std::string_view::npos)
      return InvalidArgument("slice \"" + std::string(expr) + "\": too many ':' in \"" + std::string(e) + "\"");
    TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> start, ParseField(e.substr(0, c1), expr));
    TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> stop,
                             ParseField(e.substr(c1 + 1, c2 == std::string_view::npos ? std::string_view::npos : c2 - c1 - 1), expr));
    std::optional<int64_t> step;
    if (c2 != std::string_view::npos) {
      TESSERA_ASSIGN_OR_RETURN(step, ParseField(e.substr(c2 + 1), expr));
    }
    if (step && *step == 0) return InvalidArgument("slice \"" + std::string(expr) + "\": slice step cannot be zero");
    h.dims.push_back(index::NormalizeSlice(extent, start.has_value(), start.value_or(0), stop.has_value(),
                                           stop.value_or(0), step.value_or(1)));
    h.dropped.push_back(false);
  }
  if (Status st = CheckSelection(h, shape); !st.ok()) return st.WithContext("slice \"" + std::string(expr) + "\"");
  return h;
}

std::vector<Hyperslab> SplitIntoPieces(const Hyperslab& selection, int64_t chunk0, int64_t item_bytes,
                                       int64_t max_piece_bytes) {
  if (selection.dims.empty() || selection.NumElements() == 0) return {selection};
  const index::DimSlice& s0 = selection.dims[0];
  const int64_t row_bytes = selection.NumElements() / s0.count * item_bytes;
  // Output rows per touched chunk along dimension 0, in output order.
  std::vector<int64_t> rows_per_chunk;
  index::ForEachChunkProjection(s0, chunk0, [&](const index::ChunkProjection& p) { rows_per_chunk.push_back(p.count); });
  if (s0.step < 0) std::reverse(rows_per_chunk.begin(), rows_per_chunk.end());
  std::vector<Hyperslab> pieces;
  int64_t first = 0, rows = 0;  // output rows [first, first + rows) of the piece being built
  auto emit = [&] {
    Hyperslab piece = selection;
    piece.dims[0] = index::DimSlice{s0.start + first * s0.step, s0.step, rows};
    pieces.push_back(std::move(piece));
    first += rows;
    rows = 0;
  };
  for (int64_t n : rows_per_chunk) {
    if (rows > 0 && (rows + n) * row_bytes > max_piece_bytes) emit();
    rows += n;
  }
  if (rows > 0) emit();
  return pieces;
}

namespace {

std::string SelectionCounts(const Hyperslab& selection) {
  std::vector<int64_t> counts;
  for (const index::DimSlice& x : selection.dims) counts.push_back(x.count);
  return JoinIntegers(counts, " x ");
}

}  // namespace

Status CheckSelection(const Hyperslab& selection, const std::vector<int64_t>& shape) {
  if (selection.dims.size() != shape.size() || selection.dropped.size() != shape.size())
    return InvalidArgument("selection has " + std::to_string(selection.dims.size()) + " dimensions for a rank-" +
                           std::to_string(shape.size()) + " array");
  for (size_t d = 0; d < shape.size(); ++d) {
    const index::DimSlice& x = selection.dims[d];
    const std::string dim = "selection: dimension " + std::to_string(d);
    if (x.count < 0 || x.step == 0 || x.step == INT64_MIN) return InvalidArgument(dim + " is malformed");
    if (selection.dropped[d] && x.count != 1)
      return InvalidArgument(dim + " is dropped but selects " + std::to_string(x.count) + " positions");
    if (x.count == 0) continue;
    // The last position, start + (count - 1) * step, checked without overflowing.
    const bool inside = x.start >= 0 && x.start < shape[d] &&
                        (x.step > 0 ? x.count - 1 <= (shape[d] - 1 - x.start) / x.step
                                    : x.count - 1 <= x.start / -x.step);
    if (!inside)
      return OutOfRange(dim + " (start " + std::to_string(x.start) + ", step " + std::to_string(x.step) + ", count " +
                        std::to_string(x.count) + ") leaves [0, " + std::to_string(shape[d]) + ")");
  }
  int64_t elements = 1;
  for (const index::DimSlice& x : selection.dims) {
    if (x.count == 0) return Status::Ok();
    if (__builtin_mul_overflow(elements, x.count, &elements))
      return OutOfRange("selection: more than 2^63 - 1 elements (counts " + SelectionCounts(selection) + ")");
  }
  return Status::Ok();
}

Status ReadHyperslab(const ChunkSource& source, const Hyperslab& selection, uint8_t* out,
                     const ReadOptions& options) {
  const std::vector<int64_t>& shape = source.shape();
  const std::vector<int64_t>& chunk = source.read_chunk_shape();
  const int rank = static_cast<int>(shape.size());
  TESSERA_RETURN_IF_ERROR(CheckSelection(selection, shape));
  if (selection.NumElements() == 0) return Status::Ok();
  const int64_t item = static_cast<int64_t>(ItemSize(source.dtype()));

  // Per-dimension projections.
  std::vector<std::vector<index::ChunkProjection>> proj(rank);
  int64_t proj_count[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    index::ForEachChunkProjection(selection.dims[d], chunk[d],
                                  [&](const index::ChunkProjection& p) { proj[d].push_back(p); });
    proj_count[d] = static_cast<int64_t>(proj[d].size());
  }
  // Output strides in bytes over the full (undropped) selection shape.
  int64_t out_strides[kMaxRank];
  {
    int64_t s = item;
    for (int d = rank - 1; d >= 0; --d) {
      out_strides[d] = s;
      s *= selection.dims[d].count;
    }
  }
  int64_t chunk_strides[kMaxRank];
  index::RowMajorStrides(rank, chunk.data(), chunk_strides);
  for (int d = 0; d < rank; ++d) chunk_strides[d] *= item;
  const int64_t chunk_elements = index::Product(rank, chunk.data());

  // An output far larger than the caches is written around them (see CopyStrided).
  const bool streaming = selection.NumElements() * item >= index::kStreamingStoreMinBytes;
  Bytes fill_chunk;  // built lazily, shared read-only
  std::once_flag fill_once;
  const int64_t total = index::Product(rank, proj_count);
  int threads = options.threads > 0 ? options.threads : std::max(DefaultThreadCount(), source.io_concurrency());
  threads = static_cast<int>(std::min<int64_t>(threads, total));
  std::vector<Bytes> buffers(static_cast<size_t>(std::max(threads, 1)));
  std::unique_ptr<ChunkBatch> batch;
  if (total > 1) {
    std::vector<std::vector<int64_t>> chunks(rank);
    for (int d = 0; d < rank; ++d) {
      for (const index::ChunkProjection& p : proj[d]) chunks[d].push_back(p.chunk);
      std::sort(chunks[d].begin(), chunks[d].end());  // a negative step projects in descending order
    }
    batch = source.BeginBatch(chunks);
  }

  return ParallelFor(total, threads, [&](int64_t i, int worker) -> Status {
    int64_t which[kMaxRank], coords[kMaxRank], count[kMaxRank], src_strides[kMaxRank], dst_strides[kMaxRank];
    index::Unravel(rank, proj_count, i, which);
    int64_t src_off = 0, dst_off = 0, src_last = 0;  // src_last: byte offset of the last selected element
    for (int d = 0; d < rank; ++d) {
      const index::ChunkProjection& p = proj[d][which[d]];
      coords[d] = p.chunk;
      count[d] = p.count;
      src_off += p.in_first * chunk_strides[d];
      // A step is used only between positions: one position in a chunk may have any step (up to
      // 2^63 - 1), whose stride in bytes would overflow.
      src_strides[d] = p.count > 1 ? p.in_step * chunk_strides[d] : 0;
      src_last += (p.in_first + std::max<int64_t>(0, (p.count - 1) * p.in_step)) * chunk_strides[d];
      dst_off += p.out_first * out_strides[d];
      dst_strides[d] = p.out_step * out_strides[d];
    }
    // The selection ends at src_last: the chunk's bytes past it need not be decoded.
    Bytes& buf = buffers[worker];
    const std::span<const int64_t> chunk_coords(coords, rank);
    const size_t prefix = static_cast<size_t>(src_last + item);
    TESSERA_ASSIGN_OR_RETURN(bool present, batch ? batch->ReadChunkPrefix(chunk_coords, prefix, &buf)
                                                 : source.ReadChunkPrefix(chunk_coords, prefix, &buf));
    const uint8_t* src;
    if (present) {
      if (static_cast<int64_t>(buf.size()) != chunk_elements * item)
        return CorruptData("decoded chunk has " + std::to_string(buf.size()) + " bytes, expected " +
                           std::to_string(chunk_elements * item));
      src = buf.data();
    } else {
      std::call_once(fill_once, [&] {
        fill_chunk.resize(static_cast<size_t>(chunk_elements * item));
        FillElements(fill_chunk.data(), static_cast<size_t>(chunk_elements), source.fill_value());
      });
      src = fill_chunk.data();
    }
    index::CopyStrided(rank, count, src + src_off, src_strides, out + dst_off, dst_strides, static_cast<size_t>(item),
                       streaming);
    return Status::Ok();
  });
}

}  // namespace tessera
