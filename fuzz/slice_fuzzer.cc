// The slice grammar (`tessera read --slice`, Array::Select): "SHAPE|EXPR", SHAPE a comma-separated
// list of extents. Invariant: a selection that parses fits the array (CheckSelection), and its
// element count is the product of its counts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "tessera/read/selection_read.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t bar = text.find('|');
  if (bar == std::string_view::npos) return 0;
  std::vector<int64_t> shape;
  int64_t extent = 0;
  bool digits = false;
  for (char c : text.substr(0, bar)) {
    if (c >= '0' && c <= '9') {
      if (extent > (INT64_MAX - 9) / 10) return 0;
      extent = extent * 10 + (c - '0');
      digits = true;
    } else if (c == ',' && digits) {
      shape.push_back(extent);
      extent = 0;
      digits = false;
    } else {
      return 0;
    }
  }
  if (digits) shape.push_back(extent);
  if (shape.size() > 16) return 0;
  auto sel = ParseSliceExpression(text.substr(bar + 1), shape);
  if (!sel.ok()) return 0;
  FUZZ_CHECK(CheckSelection(*sel, shape).ok(), "a parsed selection fits the array");
  FUZZ_CHECK(sel->dims.size() == shape.size() && sel->dropped.size() == shape.size(), "one slice a dimension");
  unsigned __int128 elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const auto& s = sel->dims[d];
    FUZZ_CHECK(s.count >= 0 && s.count <= shape[d], "count within the extent");
    FUZZ_CHECK(!sel->dropped[d] || s.count == 1, "an integer selects one position");
    elements *= static_cast<unsigned __int128>(s.count);
  }
  FUZZ_CHECK(elements == static_cast<unsigned __int128>(sel->NumElements()), "NumElements");
  return 0;
}
