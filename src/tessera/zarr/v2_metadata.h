// Zarr v2 arrays read through the v3 machinery: a `.zarray` document (with its `.zattrs`) becomes the
// zarr.json an equivalent v3 array would have, so every reader of Zarr v3 reads v2 as well.
//
//   dtype "<u2" / ">f8" / "|b1" ...  -> data_type, and the bytes codec's endian
//   order "F"                         -> a transpose codec first (reversed dimensions)
//   compressor blosc/zstd/gzip/zlib/lz4/null -> blosc / zstd / gzip / numcodecs.zlib / numcodecs.lz4 /
//                                        none; bz2 and lzma -> numcodecs.bz2 / numcodecs.lzma
//   filters delta, quantize, fixedscaleoffset, bitround -> numcodecs.<id> before the bytes codec, whose byte order
//                                        becomes the filter's astype's; shuffle and the checksums
//                                        crc32/adler32/crc32c/fletcher32 -> numcodecs.<id> after it
//   dimension_separator "." or "/"    -> chunk_key_encoding "v2" with that separator
//   fill_value null                   -> 0 (what zarr-python reads for chunks not stored)
// Other filters (and an array filter after a bytes filter), object and string dtypes and compressors
// tessera does not read are kUnsupported, naming the numcodecs id.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"

namespace tessera::zarr {

// `zarray` and `zattrs` (an empty object when there is none) as a v3 array document. `where` names
// the .zarray in errors.
Result<nlohmann::json> V3DocumentFromV2(const nlohmann::json& zarray, const nlohmann::json& zattrs,
                                        const std::string& where);

}  // namespace tessera::zarr
