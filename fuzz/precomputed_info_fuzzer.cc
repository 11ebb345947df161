// Neuroglancer precomputed `info` text, with its scales and sharding specs. Invariant: an info that
// validates survives ToJson/FromJson unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "tessera/precomputed/info.h"
#include "tessera/zarr/metadata.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = zarr::ParseJsonDocument(text, "fuzz/info");
  if (!doc.ok()) return 0;
  auto info = precomputed::VolumeInfo::FromJson(*doc);
  if (!info.ok()) return 0;
  const nlohmann::json again = info->ToJson();
  auto reparsed = precomputed::VolumeInfo::FromJson(again);
  FUZZ_CHECK(reparsed.ok(), "an info written by ToJson parses");
  FUZZ_CHECK(reparsed->ToJson() == again, "ToJson/FromJson round trip");
  return 0;
}
