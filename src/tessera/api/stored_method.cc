#include "tessera/api/stored_method.h"

#include <algorithm>

#include "tessera/spec/spec_error.h"

namespace tessera::api_internal {
namespace {

// The elements of the box sampled at each level above 0, per dimension at most this many: enough
// to tell the methods apart on all but constant data, little to read.
constexpr int64_t kSampleExtent = 32;

// A box at the origin of level k + 1 and the box of level k it is the reduction of.
struct SamplePair {
  std::vector<int64_t> lower_shape;
  Bytes lower, upper;
};

Result<Bytes> ReadBox(const Array& a, const std::vector<int64_t>& box) {
  Hyperslab sel = Hyperslab::All(a.shape());
  int64_t n = 1;
  for (size_t d = 0; d < box.size(); ++d) {
    sel.dims[d] = {0, 1, box[d]};
    n *= box[d];
  }
  Bytes out(static_cast<size_t>(n) * a.item_size());
  TESSERA_RETURN_IF_ERROR(a.Read(sel, out.data()));
  return out;
}

bool Reproduces(const SamplePair& p, DataType dtype, pyramid::DownsampleMethod method,
                const std::vector<int64_t>& factors) {
  Result<std::unique_ptr<pyramid::RowDownsampler>> down =
      pyramid::RowDownsampler::Create(dtype, method, p.lower_shape, factors);
  if (!down.ok()) return false;  // not defined for the dtype
  pyramid::RowDownsampler& d = **down;
  const size_t in = static_cast<size_t>(d.input_row_bytes()), out_row = static_cast<size_t>(d.output_row_bytes());
  Bytes out(p.upper.size() + out_row);
  size_t at = 0;
  for (size_t row = 0; row * in < p.lower.size(); ++row) {
    if (at + out_row > out.size()) return false;
    if (d.AddRow(p.lower.data() + row * in, out.data() + at)) at += out_row;
  }
  if (at + out_row <= out.size() && d.ReducePending(out.data() + at)) at += out_row;
  return at == p.upper.size() && std::equal(p.upper.begin(), p.upper.end(), out.begin());
}

}  // namespace

Result<pyramid::DownsampleMethod> StoredDownsampleMethod(const Location& location,
                                                         std::span<const Array* const> levels,
                                                         const ArraySpec& stored,
                                                         std::optional<pyramid::DownsampleMethod> given,
                                                         pyramid::DownsampleMethod default_method) {
  const std::vector<int64_t>& factors = stored.pyramid.factors;
  std::vector<SamplePair> pairs;
  for (size_t k = 1; k < levels.size(); ++k) {
    const Array &lower = *levels[k - 1], &upper = *levels[k];
    SamplePair p;
    std::vector<int64_t> upper_box;
    bool empty = false;
    for (size_t d = 0; d < upper.shape().size(); ++d) {
      upper_box.push_back(std::min(upper.shape()[d], kSampleExtent));
      p.lower_shape.push_back(std::min(upper_box[d] * factors[d], lower.shape()[d]));
      empty = empty || upper_box[d] == 0;
    }
    if (empty) continue;
    TESSERA_ASSIGN_OR_RETURN(p.lower, ReadBox(lower, p.lower_shape));
    TESSERA_ASSIGN_OR_RETURN(p.upper, ReadBox(upper, upper_box));
    pairs.push_back(std::move(p));
  }
  std::vector<pyramid::DownsampleMethod> candidates = {default_method};
  if (given) {
    candidates = {*given};
  } else {
    for (pyramid::DownsampleMethod m :
         {pyramid::DownsampleMethod::kMean, pyramid::DownsampleMethod::kMode, pyramid::DownsampleMethod::kStride,
          pyramid::DownsampleMethod::kMin, pyramid::DownsampleMethod::kMax, pyramid::DownsampleMethod::kMedian})
      if (m != default_method) candidates.push_back(m);
  }
  for (pyramid::DownsampleMethod m : candidates)
    if (std::all_of(pairs.begin(), pairs.end(), [&](const SamplePair& p) { return Reproduces(p, stored.dtype, m, factors); }))
      return m;
  if (given)
    return FieldError(ErrorKind::kInvalidArgument, "method",
                      std::string(pyramid::DownsampleMethodName(*given)) + " does not reproduce the stored levels of " +
                          location.ToString() + " from one another (its format records no method; give the one it "
                          "was written with, or leave it out to have it found)");
  return Unsupported(location.ToString() + ": its levels are not the downsampling of one another by any method "
                     "tessera computes (stride, mean, min, max, median, mode); continuing it (mode a) would mix "
                     "methods, so it is not supported");
}

}  // namespace tessera::api_internal
