// The registry's numcodecs names, as zarr-python 3 writes them into zarr.json.
#include <gtest/gtest.h>

#include "tessera/codec/registry.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

TEST(RegistryNumcodecs, ParsesWhatZarrPythonWrites) {
  const ChunkSpec spec = codec_test::MakeSpec(DataType::kInt32, {4, 5});
  // zarr.create_array(filters=[Delta(dtype="<i4")], compressors=[Shuffle(), Blosc(), BZ2(), LZMA(),
  // Zlib(), GZip(), Zstd(), CRC32(), Adler32(), CRC32C(), Fletcher32()])
  const nlohmann::json codecs = nlohmann::json::parse(R"([
      {"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
      {"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
      {"name": "numcodecs.blosc", "configuration": {}},
      {"name": "numcodecs.bz2", "configuration": {}},
      {"name": "numcodecs.lzma", "configuration": {}},
      {"name": "numcodecs.zlib", "configuration": {"level": 3}},
      {"name": "numcodecs.gzip", "configuration": {}},
      {"name": "numcodecs.zstd", "configuration": {}},
      {"name": "numcodecs.crc32", "configuration": {}},
      {"name": "numcodecs.adler32", "configuration": {}},
      {"name": "numcodecs.crc32c", "configuration": {}},
      {"name": "numcodecs.fletcher32", "configuration": {}}])");
  Result<CodecChain> chain = ParseCodecChain(codecs, spec);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ(chain->array_to_array.size(), 1u);
  EXPECT_EQ(chain->bytes_to_bytes.size(), 11u);
  const Bytes array = codec_test::RandomBytes(spec.NumBytes(), 3);
  Bytes encoded, decoded;
  ASSERT_TRUE(chain->Encode(spec, array, &encoded).ok());
  ASSERT_TRUE(chain->Decode(spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, array);
}

TEST(RegistryNumcodecs, CodecsStillUnreadAreNamed) {
  const ChunkSpec spec = codec_test::MakeSpec(DataType::kFloat64, {4});
  const nlohmann::json codecs = nlohmann::json::parse(R"([
      {"name": "numcodecs.astype", "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}},
      {"name": "bytes", "configuration": {"endian": "little"}}])");
  EXPECT_ERROR(ParseCodecChain(codecs, spec), ErrorKind::kUnsupported, "unknown codec \"numcodecs.astype\"", "numcodecs.bz2");
  // numcodecs.blosc's shuffle is a number.
  EXPECT_ERROR(ParseCodecChain(nlohmann::json::parse(R"([{"name": "bytes"}, {"name": "numcodecs.blosc", "configuration": {"shuffle": 3}}])"),
                               codec_test::MakeSpec(DataType::kUInt8, {4})),
               ErrorKind::kInvalidArgument, "numcodecs.blosc codec", "\"shuffle\"");
}

}  // namespace
}  // namespace tessera
