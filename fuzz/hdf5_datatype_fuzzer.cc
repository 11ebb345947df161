// One HDF5 datatype message body: the datatype parser (every class, nested compounds, arrays,
// enums, variable-length, complex), its numpy mapping, the in-place conversion of a few elements
// from the file's layout to numpy's, and those elements as JSON (attribute values).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz_support.h"
#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_datatype_json.h"
#include "tessera/hdf5/h5_datatype_numpy.h"
#include "tessera/hdf5/h5_raw_file.h"

using namespace tessera;

namespace {

// Elements converted per input, and the most bytes they may take.
constexpr size_t kElements = 3;
constexpr size_t kMaxConvertedBytes = size_t{1} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto store = std::make_shared<MemoryStore>();
  (void)store->Set("type.bin", ByteView(data, size));
  auto file = hdf5::RawFile::Open(store, "type.bin");
  if (!file.ok()) return 0;
  hdf5::FieldReader r(ByteView(data, size), **file, "datatype message", 0);
  auto type = hdf5::ParseH5Type(r, "fuzz datatype");
  if (!type.ok()) return 0;
  (void)hdf5::H5TypeClassName(type->cls);
  auto element = hdf5::MapToNumpy(*type, "fuzz datatype");
  if (!element.ok()) return 0;
  if (element->item_bytes == 0 || element->item_bytes > kMaxConvertedBytes / kElements) return 0;
  // The bytes to convert come from the input itself (repeated), so the values vary too.
  Bytes elements(element->item_bytes * kElements);
  for (size_t i = 0; i < elements.size(); ++i) elements[i] = size ? data[i % size] : 0;
  hdf5::ConvertToNumpy(element->steps, elements.data(), kElements, element->item_bytes);
  (void)element->numpy.dump();
  if (type->size <= elements.size()) (void)hdf5::ElementToJson(*type, elements).dump();
  return 0;
}
