// Downsampling one level of a pyramid into the next, a row (along dimension 0) at a time.
//
// The rules are those of tensorstore's `downsample` driver, so that every level equals
// tensorstore's downsampled view of the level above, element for element:
//   - Along a dimension of n elements and factor f the next level has ceil(n / f) elements;
//     output element o reduces the block [o*f, min((o+1)*f, n)): a block the array's edge cuts
//     reduces over the elements that exist.
//   - stride: the block's first element.
//   - mean: integers and bool summed in 64 bits (128 for 64-bit integers), divided, rounded to
//     nearest with ties to even; float16 and float32 summed in float32, float64 in float64,
//     complex in its own type; every sum in the block's row-major order.
//   - min / max: a NaN never replaces the running value (a block of NaNs gives +inf / -inf).
//   - median: the lower median (element (count - 1) / 2 in sorted order).
//   - mode: the most frequent value, the smallest of tied ones (complex: by real, then imaginary).
//   - bool: median and mode are the mean.
// min, max and median of complex types are not defined.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"

namespace tessera::pyramid {

enum class DownsampleMethod { kStride, kMean, kMin, kMax, kMedian, kMode };

Result<DownsampleMethod> ParseDownsampleMethod(std::string_view name);  // "mean", ...
std::string_view DownsampleMethodName(DownsampleMethod method);
// Unsupported when `method` is not defined for `dtype` (min, max, median of complex).
Status CheckDownsampleMethod(DataType dtype, DownsampleMethod method);

// ceil(shape[d] / factors[d]) per dimension; an unbounded dimension 0 (0) stays 0.
std::vector<int64_t> DownsampledShape(std::span<const int64_t> shape, std::span<const int64_t> factors);

// Reduces the rows (along dimension 0) of one level into the rows of the next: each group of
// factors[0] consecutive rows becomes one output row. Rows are C-order, host-endian elements of
// `dtype`; a row of a rank-1 array is one element.
class RowDownsampler {
 public:
  // `shape`: the level's shape (shape[0], the row count, is not used: rows just arrive);
  // `factors`: one per dimension, >= 1.
  static Result<std::unique_ptr<RowDownsampler>> Create(DataType dtype, DownsampleMethod method,
                                                        std::span<const int64_t> shape,
                                                        std::span<const int64_t> factors);
  virtual ~RowDownsampler() = default;

  int64_t input_row_bytes() const { return input_row_elements_ * item_bytes_; }
  int64_t output_row_bytes() const { return output_row_elements_ * item_bytes_; }
  // Rows of the current group added so far (0 .. factors[0] - 1).
  int64_t pending_rows() const { return pending_rows_; }
  // Bytes of working memory (accumulators or stored elements).
  virtual int64_t memory_bytes() const = 0;

  // Adds the next input row (input_row_bytes()). Returns true when it completes a group, whose
  // reduction is then in `out` (output_row_bytes()); the next row starts a new group.
  bool AddRow(const uint8_t* row, uint8_t* out);
  // Reduces the rows of the incomplete group (the level ends inside a block along dimension 0)
  // into `out`; false, `out` untouched, when no row is pending. The group stays open: more rows
  // may still complete it.
  bool ReducePending(uint8_t* out);

 protected:
  RowDownsampler(int64_t item_bytes, int64_t input_row_elements, int64_t output_row_elements, int64_t rows_per_group)
      : item_bytes_(item_bytes),
        input_row_elements_(input_row_elements),
        output_row_elements_(output_row_elements),
        rows_per_group_(rows_per_group) {}
  // Folds input row number `index` of the group (0 first) into the working memory.
  virtual void Accumulate(const uint8_t* row, int64_t index) = 0;
  // Writes the reduction of the group's first `rows` rows to `out`, leaving the working memory
  // able to take more rows.
  virtual void Reduce(int64_t rows, uint8_t* out) = 0;

 private:
  const int64_t item_bytes_;
  const int64_t input_row_elements_;
  const int64_t output_row_elements_;
  const int64_t rows_per_group_;
  int64_t pending_rows_ = 0;
};

}  // namespace tessera::pyramid
