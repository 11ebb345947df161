#include "tessera/spec/array_spec.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "tessera/core/limits.h"
#include "tessera/core/chunk_shape.h"
#include "tessera/core/text.h"
#include "tessera/spec/spec_error.h"
#include "tessera/index/index.h"

namespace tessera {

namespace {

constexpr std::array<std::string_view, 6> kCodecNames = {"none", "zstd", "gzip", "blosc-lz4", "blosc-zstd", "blosc"};

Status Invalid(std::string_view field, const std::string& message) { return InvalidField(field, message); }

// An optional per-dimension list (empty = the format's default): one positive entry per dimension.
Status CheckOptionalExtents(std::string_view field, const std::vector<int64_t>& values, size_t rank) {
  if (values.empty()) return Status::Ok();
  if (values.size() != rank)
    return Invalid(field, JoinIntegers(values) + " has " + std::to_string(values.size()) + " entries for a rank-" +
                              std::to_string(rank) + " array");
  for (int64_t v : values)
    if (v <= 0) return Invalid(field, "entries must be > 0, not " + JoinIntegers(values));
  return Status::Ok();
}

// arrival_order: empty, or a permutation of 0..rank-1 that keeps dimension 0 (frames arrive along it).
Status CheckArrivalOrder(const std::vector<int64_t>& order, size_t rank) {
  if (order.empty()) return Status::Ok();
  if (order.size() != rank)
    return Invalid("arrival_order", JoinIntegers(order) + " has " + std::to_string(order.size()) +
                                        " entries for a rank-" + std::to_string(rank) +
                                        " array (one per dimension: the stored dimension each arriving one is)");
  std::vector<bool> seen(rank, false);
  for (int64_t d : order) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(d)])
      return Invalid("arrival_order", "must be a permutation of 0.." + std::to_string(rank - 1) + ", not " +
                                          JoinIntegers(order));
    seen[static_cast<size_t>(d)] = true;
  }
  if (order[0] != 0)
    return Invalid("arrival_order", "must start with 0 (frames arrive along dimension 0; only the dimensions "
                                    "after it may be reordered), not " + JoinIntegers(order));
  return Status::Ok();
}

Status CheckGeometry(const ArraySpec& s) {
  const size_t rank = s.shape.size();
  if (rank == 0) return Invalid("shape", "an array needs at least one dimension");
  if (rank > static_cast<size_t>(kMaxRank))
    return Invalid("shape", "rank " + std::to_string(rank) + " exceeds the limit of " + std::to_string(kMaxRank));
  if (s.shape[0] < 0) return Invalid("shape", "entries must be >= 0 (dimension 0 may be 0: unbounded), not " + JoinIntegers(s.shape));
  for (size_t d = 1; d < rank; ++d)
    if (s.shape[d] <= 0)
      return Invalid("shape", "entries after the first must be > 0, not " + JoinIntegers(s.shape) + " (only dimension 0 may be 0: unbounded)");
  TESSERA_RETURN_IF_ERROR(CheckOptionalExtents("chunk_shape", s.chunk_shape, rank));
  TESSERA_RETURN_IF_ERROR(CheckOptionalExtents("shard_chunks", s.shard_chunks, rank));
  if (!s.dimension_names.empty() && s.dimension_names.size() != rank)
    return Invalid("dimension_names", std::to_string(s.dimension_names.size()) + " names for a rank-" +
                                          std::to_string(rank) + " array");
  TESSERA_RETURN_IF_ERROR(CheckArrivalOrder(s.arrival_order, rank));
  if (!s.attributes.is_object()) return Invalid("attributes", "must be a JSON object, not " + s.attributes.dump());
  return Status::Ok();
}

// The most levels `auto` makes (a 2^31-element dimension needs 32 halvings).
constexpr int kMaxAutoLevels = 32;

// Levels until every dimension fits one chunk (an unbounded dimension 0 is not counted).
Result<int> AutoLevels(const ArraySpec& s) {
  int levels = 1;
  for (size_t d = s.shape[0] == 0 ? 1 : 0; d < s.shape.size(); ++d) {
    int64_t n = s.shape[d];
    int need = 1;
    while (n > s.chunk_shape[d]) {
      if (s.pyramid.factors[d] == 1 || need == kMaxAutoLevels)
        return Invalid("pyramid", "auto: dimension " + std::to_string(d) + " (" + std::to_string(s.shape[d]) +
                                      ") never fits one chunk (" + std::to_string(s.chunk_shape[d]) +
                                      ") with downsample factor " + std::to_string(s.pyramid.factors[d]));
      n = index::CeilDiv(n, s.pyramid.factors[d]);
      ++need;
    }
    levels = std::max(levels, need);
  }
  return levels;
}

}  // namespace

Status CheckCodecLevel(const ArraySpec& s) {
  if (!s.level) return Status::Ok();
  const int l = *s.level;
  switch (*s.codec) {
    case Codec::kNone:
      return Invalid("level", "codec none has no level (got " + std::to_string(l) + ")");
    case Codec::kZstd:
      if (l < -131072 || l > 22) return Invalid("level", "zstd levels are -131072..22, not " + std::to_string(l));
      return Status::Ok();
    case Codec::kGzip:
    case Codec::kBloscLz4:
    case Codec::kBloscZstd:
    case Codec::kBlosc:
      if (l < 0 || l > 9)
        return Invalid("level", std::string(CodecName(*s.codec)) + " levels are 0..9, not " + std::to_string(l));
      return Status::Ok();
  }
  return Status::Ok();
}

ArraySpec LevelShape(const ArraySpec& resolved, int level) {
  ArraySpec s = resolved;
  s.pyramid = PyramidSpec{};
  s.ome = OmeSpec{};
  if (level == 0) return s;
  // Levels past the first are fed by the pyramid's downsamplers, which produce stored order.
  s.arrival_order.clear();
  for (size_t d = 0; d < s.shape.size(); ++d) {
    int64_t f = 1;
    for (int k = 0; k < level; ++k) f *= resolved.pyramid.factors[d];
    s.shape[d] = index::CeilDiv(resolved.shape[d], f);
    if (s.shape[d] == 0) continue;  // unbounded dimension 0 keeps its chunking
    const int64_t chunk = std::min(s.chunk_shape[d], s.shape[d]);
    if (!s.shard_chunks.empty())
      s.shard_chunks[d] = std::min(s.shard_chunks[d], index::CeilDiv(s.shape[d], chunk));
    s.chunk_shape[d] = chunk;
  }
  return s;
}

std::string_view CodecName(Codec codec) { return kCodecNames[static_cast<size_t>(codec)]; }

Result<Codec> ParseCodec(std::string_view name) {
  for (size_t i = 0; i < kCodecNames.size(); ++i)
    if (kCodecNames[i] == name) return static_cast<Codec>(i);
  std::string quoted = "\"";
  quoted.append(name).append("\" (supported: none, zstd, gzip, blosc-lz4, blosc-zstd, blosc)");
  return FieldError(ErrorKind::kUnsupported, "codec", quoted);
}

Status CheckCommonFields(const ArraySpec& s) {
  TESSERA_RETURN_IF_ERROR(CheckGeometry(s));
  if (!s.fill_value.is_null()) {
    Result<FillValue> f = ParseFillValue(s.dtype, s.fill_value);
    if (!f.ok()) return FieldError(f.status().kind(), "fill_value", f.status().message());
  }
  return Status::Ok();
}

Status CheckPyramidRequest(const ArraySpec& s) {
  const PyramidSpec& p = s.pyramid;
  if (p.levels < 0) return Invalid("pyramid", "levels must be >= 1 (or 0: auto), not " + std::to_string(p.levels));
  if (p.levels == 1 && (p.method || !p.factors.empty()))
    return Invalid(p.method ? "downsample" : "downsample_factors", "applies to a pyramid (give levels > 1 or auto)");
  return Status::Ok();
}

Status ResolvePyramidLevels(ArraySpec* s) {
  PyramidSpec& p = s->pyramid;
  if (p.levels == 1) return Status::Ok();
  if (!p.method) p.method = pyramid::DownsampleMethod::kMean;  // the default unless the format has its own
  Status st = pyramid::CheckDownsampleMethod(s->dtype, *p.method);
  if (!st.ok()) return FieldError(st.kind(), "downsample", st.message());
  TESSERA_RETURN_IF_ERROR(CheckOptionalExtents("downsample_factors", p.factors, s->shape.size()));
  if (p.factors.empty()) return Invalid("downsample_factors", "the format gave no default: give one per dimension");
  if (std::all_of(p.factors.begin(), p.factors.end(), [](int64_t f) { return f == 1; }))
    return Invalid("downsample_factors", "all factors are 1: every level would be the same");
  if (p.levels == 0) {
    TESSERA_ASSIGN_OR_RETURN(p.levels, AutoLevels(*s));
  }
  return Status::Ok();
}

}  // namespace tessera
