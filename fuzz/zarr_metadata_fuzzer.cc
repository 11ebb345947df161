// zarr.json and .zarray text: parsing, validation, the v2 -> v3 translation and the codec
// pipeline built from the result. Invariant: a document that validates survives ToJson/FromJson
// unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "tessera/codec/registry.h"
#include "tessera/zarr/metadata.h"
#include "tessera/zarr/v2_metadata.h"

using namespace tessera;

namespace {

void CheckV3(const nlohmann::json& doc) {
  auto meta = zarr::ArrayMetadata::FromJson(doc);
  if (!meta.ok()) {
    FUZZ_CHECK(!meta.status().message().empty(), "an error says what is wrong");
    return;
  }
  const nlohmann::json again = meta->ToJson();
  auto reparsed = zarr::ArrayMetadata::FromJson(again);
  FUZZ_CHECK(reparsed.ok(), "metadata written by ToJson parses");
  FUZZ_CHECK(reparsed->ToJson() == again, "ToJson/FromJson round trip");
  (void)ParseCodecChain(meta->codecs, ChunkSpec{meta->dtype, meta->chunk_shape, meta->fill_value});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = zarr::ParseJsonDocument(text, "fuzz/zarr.json");
  if (!doc.ok()) return 0;
  CheckV3(*doc);
  // The same text as a .zarray, with and without itself as .zattrs.
  auto v3 = zarr::V3DocumentFromV2(*doc, nlohmann::json::object(), "fuzz/.zarray");
  if (v3.ok()) CheckV3(*v3);
  if (doc->is_object()) (void)zarr::V3DocumentFromV2(*doc, *doc, "fuzz/.zarray");
  return 0;
}
