// A program outside tessera's tree, built against an installed tessera (find_package(tessera)):
// streams a small Zarr v3 array through the façade, reopens it, reads a slice and checks it.
// Usage: app <new array directory>. Exit status 0 when every value read back is right.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tessera/api/tessera.h"

static int Fail(const char* what, const tessera::Status& status) {
  std::fprintf(stderr, "consumer: %s: %s\n", what, status.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  // 6 x 4 x 5 uint16, value = index in C order, chunks 2 x 2 x 5, zstd.
  tessera::ArraySpec spec;
  spec.dtype = tessera::DataType::kUInt16;
  spec.shape = {6, 4, 5};
  spec.chunk_shape = {2, 2, 5};
  spec.codec = tessera::Codec::kZstd;
  std::vector<uint16_t> values(6 * 4 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i);

  auto stream = tessera::CreateStream(argv[1], spec, {.format = tessera::Format::kZarr3});
  if (!stream.ok()) return Fail("CreateStream", stream.status());
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  if (auto st = (*stream)->Append({bytes, values.size() * sizeof(uint16_t)}); !st.ok()) return Fail("Append", st);
  if (auto st = (*stream)->Close(); !st.ok()) return Fail("Close", st);

  auto array = tessera::OpenArray(argv[1]);
  if (!array.ok()) return Fail("OpenArray", array.status());
  auto selection = (*array)->Select("1:5:2, 3, ::-2");  // rows 1 and 3, column 3, x = 4, 2, 0
  if (!selection.ok()) return Fail("Select", selection.status());
  std::vector<uint16_t> got(selection->NumElements());
  if (auto st = (*array)->Read(*selection, got.data()); !st.ok()) return Fail("Read", st);

  std::vector<uint16_t> want;
  for (int z : {1, 3})
    for (int x : {4, 2, 0}) want.push_back(static_cast<uint16_t>((z * 4 + 3) * 5 + x));
  if (got != want) {
    std::fprintf(stderr, "consumer: read %zu values, not the %zu expected ones\n", got.size(), want.size());
    return 1;
  }
  std::printf("consumer: read back %zu values through find_package(tessera)\n", got.size());
  return 0;
}
