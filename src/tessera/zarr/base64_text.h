// RFC 4648 base64, zarr-python's JSON form of a bytes fill value.
#pragma once

#include <optional>
#include <string>

namespace tessera::zarr {

// The bytes `text` spells; nullopt when it is no base64.
std::optional<std::string> DecodeBase64(const std::string& text);

}  // namespace tessera::zarr
