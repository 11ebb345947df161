// numcodecs' codecs (bz2, lzma, zlib, the 32-bit checksums, shuffle, delta, bitround, quantize,
// fixedscaleoffset) decoding untrusted chunk bytes: the first byte picks the codec and its
// parameters, the rest is the encoded chunk.
// Invariants: a chunk that decodes, encoded again, decodes to the same bytes; for shuffle, and
// integer delta into an astype no wider than the array's type, encoding the decoding gives back
// the input exactly.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz_check.h"
#include "tessera/codec/bz2_codec.h"
#include "tessera/codec/checksum32_codec.h"
#include "tessera/codec/bitround_codec.h"
#include "tessera/codec/delta_codec.h"
#include "tessera/codec/fixedscaleoffset_codec.h"
#include "tessera/codec/lzma_codec.h"
#include "tessera/codec/quantize_codec.h"
#include "tessera/codec/shuffle_codec.h"
#include "tessera/codec/zlib_codec.h"

using namespace tessera;

namespace {

// The decoding of larger chunks is not interesting and only slows the fuzzer down.
constexpr size_t kMaxDecodedBytes = 1 << 22;

std::unique_ptr<BytesToBytesCodec> PickBytesCodec(uint8_t choice) {
  const uint8_t parameter = choice >> 4;
  switch (choice & 0x7) {
    case 0: return std::make_unique<Bz2Codec>(1 + parameter % 9);
    case 1: return std::make_unique<LzmaCodec>(parameter % 2 ? LzmaCodec::kFormatAlone : LzmaCodec::kFormatXz, -1, 0);
    case 2: return std::make_unique<ZlibCodec>(parameter % 10);
    case 3: return std::make_unique<Checksum32Codec>(static_cast<Checksum32Kind>(parameter % 4), parameter >= 8);
    default: return std::make_unique<ShuffleCodec>(parameter);  // 4 and 5 (6 and 7 are array codecs)
  }
}

void FuzzBytesCodec(const BytesToBytesCodec& codec, ByteView encoded) {
  Bytes decoded;
  if (!codec.Decode(encoded, &decoded).ok() || decoded.size() > kMaxDecodedBytes) return;
  Bytes again, round;
  FUZZ_CHECK(codec.Encode(decoded, &again).ok(), "a decoding encodes");
  FUZZ_CHECK(again.size() <= *codec.MaxEncodedSize(decoded.size()), "encoding within MaxEncodedSize");
  FUZZ_CHECK(codec.Decode(again, &round).ok(), "the re-encoding decodes");
  FUZZ_CHECK(round == decoded, "decode(encode(x)) == x");
  if (codec.name() == "numcodecs.shuffle") FUZZ_CHECK(again == Bytes(encoded.begin(), encoded.end()), "shuffle(unshuffle(x)) == x");
}

void FuzzDelta(uint8_t choice, ByteView encoded) {
  static const DataType kTypes[] = {DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
                                    DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64,
                                    DataType::kFloat16, DataType::kFloat32, DataType::kFloat64};
  const DataType dtype = kTypes[(choice >> 3) % 11];
  const bool integer = dtype != DataType::kFloat16 && dtype != DataType::kFloat32 && dtype != DataType::kFloat64;
  const DataType astype = integer ? kTypes[(choice >> 4) % 8] : dtype;
  const DeltaCodec codec(dtype, astype);
  const ChunkSpec spec{dtype, {static_cast<int64_t>(encoded.size() / ItemSize(astype))}, ZeroFill(dtype)};
  Bytes decoded, again;
  // A size that is not whole elements of astype is refused.
  const Status st = codec.Decode(spec, encoded, &decoded);
  if (encoded.size() % ItemSize(astype) != 0) {
    FUZZ_CHECK(!st.ok(), "partial elements refused");
    return;
  }
  FUZZ_CHECK(st.ok(), "whole elements decode");
  FUZZ_CHECK(decoded.size() == spec.NumBytes(), "decoded size");
  FUZZ_CHECK(codec.Encode(spec, decoded, &again).ok(), "the decoding encodes");
  // Differences are taken in the array's type, so a wider astype gets them back only modulo the
  // array's width; as wide or narrower, every stored difference comes back exactly.
  if (integer && ItemSize(astype) <= ItemSize(dtype))
    FUZZ_CHECK(again == Bytes(encoded.begin(), encoded.end()), "delta(cumsum(x)) == x for integers");
}

// bitround, quantize and fixedscaleoffset over float32/float64 arrays: decoding any bytes of the
// encoded type's size works and gives the array's size; encoding what decoded works too.
void FuzzFloatArrayCodec(uint8_t choice, ByteView encoded) {
  const DataType dtype = (choice & 0x80) ? DataType::kFloat64 : DataType::kFloat32;
  std::unique_ptr<ArrayToArrayCodec> codec;
  switch ((choice >> 3) % 3) {
    case 0: codec = std::make_unique<BitRoundCodec>(dtype, (choice >> 5) & 3); break;
    case 1: codec = std::make_unique<QuantizeCodec>(static_cast<int>(choice >> 5) - 2, dtype, (choice & 0x40) ? DataType::kFloat16 : dtype); break;
    default:
      codec = std::make_unique<FixedScaleOffsetCodec>(-1.5, 10.0, dtype, (choice & 0x40) ? DataType::kUInt8 : DataType::kInt32, nlohmann::json::object());
  }
  const ChunkSpec probe{dtype, {1}, ZeroFill(dtype)};
  const size_t encoded_item = ItemSize(codec->EncodedSpec(probe)->dtype);
  const ChunkSpec spec{dtype, {static_cast<int64_t>(encoded.size() / encoded_item)}, ZeroFill(dtype)};
  Bytes decoded, again;
  const Status st = codec->Decode(spec, encoded, &decoded);
  FUZZ_CHECK(st.ok() == (encoded.size() % encoded_item == 0), "decodes exactly the inputs of whole elements");
  if (!st.ok()) return;
  FUZZ_CHECK(decoded.size() == spec.NumBytes(), "decoded size");
  FUZZ_CHECK(codec->Encode(spec, decoded, &again).ok(), "the decoding encodes");
  FUZZ_CHECK(again.size() == encoded.size(), "re-encoded size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ByteView encoded(data + 1, size - 1);
  if ((data[0] & 0x7) == 7) {
    FuzzDelta(data[0], encoded);
    return 0;
  }
  if ((data[0] & 0x7) == 6) {
    FuzzFloatArrayCodec(data[0], encoded);
    return 0;
  }
  FuzzBytesCodec(*PickBytesCodec(data[0]), encoded);
  return 0;
}
