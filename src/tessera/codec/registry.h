// Builds codec chains from Zarr v3 `codecs` JSON through one explicit name -> factory table.
#pragma once

#include <nlohmann/json.hpp>

#include "tessera/codec/codec.h"

namespace tessera {

// Parses a `codecs` list for chunks described by `decoded` (the chunk's dtype, shape and fill).
// Unknown codec names are kUnsupported; malformed configurations are kInvalidArgument.
Result<CodecChain> ParseCodecChain(const nlohmann::json& codecs, const ChunkSpec& decoded);

// Names the registry knows, for messages and `tessera info`.
std::vector<std::string> RegisteredCodecNames();

}  // namespace tessera
