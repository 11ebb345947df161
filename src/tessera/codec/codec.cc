#include "tessera/codec/codec.h"

#include <bit>
#include <iterator>
#include <utility>

namespace tessera {

int64_t ChunkSpec::NumElements() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

namespace {

// Buffers for a pipeline of `stages` steps, each reading the previous step's output. The last step
// writes into the caller's *out; earlier steps alternate between *out and one temporary so no
// step reads the buffer it writes, and only one temporary is ever allocated.
class StageBuffers {
 public:
  StageBuffers(size_t stages, Bytes* out) : stages_(stages), out_(out) {}
  // The buffer step `k` (0-based) writes.
  Bytes* Target(size_t k) { return (stages_ - 1 - k) % 2 == 0 ? out_ : &temp_; }

 private:
  size_t stages_;
  Bytes* out_;
  Bytes temp_;
};

}  // namespace

Result<ChunkSpec> CodecChain::ArrayToBytesSpec(const ChunkSpec& spec) const {
  ChunkSpec current = spec;
  for (const auto& codec : array_to_array) {
    TESSERA_ASSIGN_OR_RETURN(current, codec->EncodedSpec(current));
  }
  return current;
}

bool CodecChain::BytesStepIsCopy(DataType dtype) const {
  static_assert(std::endian::native == std::endian::little, "tessera assumes a little-endian host");
  if (!array_to_bytes || array_to_bytes->id() != CodecId::kBytes) return false;
  return ItemSize(dtype) == 1 || array_to_bytes->endian().value_or(Endian::kLittle) == Endian::kLittle;
}

const ShardingCodec* CodecChain::sharding() const {
  if (!array_to_array.empty() || !bytes_to_bytes.empty() || !array_to_bytes) return nullptr;
  return array_to_bytes->AsSharding();
}

Status CodecChain::Encode(const ChunkSpec& spec, ByteView array, Bytes* out) const {
  if (!array_to_bytes) return FailedPrecondition("codec chain has no array->bytes codec");
  if (array.size() != spec.NumBytes()) {
    return InvalidArgument("codec chain: array is " + std::to_string(array.size()) +
                           " bytes, spec needs " + std::to_string(spec.NumBytes()));
  }
  // A little-endian bytes codec followed by a compressor is a no-op copy on this (little-endian)
  // host: the compressor reads the array directly, saving a chunk-sized copy and buffer.
  const bool skip_bytes = array_to_array.empty() && !bytes_to_bytes.empty() && BytesStepIsCopy(spec.dtype);
  StageBuffers buffers(array_to_array.size() + (skip_bytes ? 0 : 1) + bytes_to_bytes.size(), out);
  size_t stage = 0;
  const ChunkSpec* current_spec = &spec;
  ChunkSpec encoded_spec;  // used only when there are array->array codecs
  ByteView current = array;
  for (const auto& codec : array_to_array) {
    Bytes* target = buffers.Target(stage++);
    TESSERA_RETURN_IF_ERROR(codec->Encode(*current_spec, current, target));
    TESSERA_ASSIGN_OR_RETURN(encoded_spec, codec->EncodedSpec(*current_spec));
    current_spec = &encoded_spec;
    current = *target;
  }
  if (!skip_bytes) {
    Bytes* target = buffers.Target(stage++);
    TESSERA_RETURN_IF_ERROR(array_to_bytes->Encode(*current_spec, current, target));
    current = *target;
  }
  for (const auto& codec : bytes_to_bytes) {
    Bytes* target = buffers.Target(stage++);
    TESSERA_RETURN_IF_ERROR(codec->Encode(current, target));
    current = *target;
  }
  return Status::Ok();
}

Status CodecChain::Decode(const ChunkSpec& spec, ByteView encoded, Bytes* out, size_t prefix_bytes) const {
  if (!array_to_bytes) return FailedPrecondition("codec chain has no array->bytes codec");
  // encoded_specs[i] is what array_to_array[i] encodes to; it decodes to decoded_spec(i).
  std::vector<ChunkSpec> encoded_specs;
  encoded_specs.reserve(array_to_array.size());
  for (const auto& codec : array_to_array) {
    TESSERA_ASSIGN_OR_RETURN(
        ChunkSpec next, codec->EncodedSpec(encoded_specs.empty() ? spec : encoded_specs.back()));
    encoded_specs.push_back(std::move(next));
  }
  auto decoded_spec = [&](size_t i) -> const ChunkSpec& {
    return i == 0 ? spec : encoded_specs[i - 1];
  };
  // A little-endian bytes codec followed by a compressor is a no-op copy on this (little-endian)
  // host: the compressor reads the array directly, saving a chunk-sized copy and buffer.
  const bool bytes_codec = array_to_bytes->id() == CodecId::kBytes;
  const bool skip_bytes = array_to_array.empty() && !bytes_to_bytes.empty() && BytesStepIsCopy(spec.dtype);
  StageBuffers buffers(array_to_array.size() + (skip_bytes ? 0 : 1) + bytes_to_bytes.size(), out);
  size_t stage = 0;
  ByteView current = encoded;
  // Behind the fixed-size bytes codec, the compressor nearest the array decodes to a known size
  // (a header claiming another is refused before allocating it).
  const std::optional<size_t> array_bytes =
      bytes_codec ? std::optional<size_t>(decoded_spec(array_to_array.size()).NumBytes()) : std::nullopt;
  for (auto it = bytes_to_bytes.rbegin(); it != bytes_to_bytes.rend(); ++it) {
    Bytes* target = buffers.Target(stage++);
    const bool nearest = std::next(it) == bytes_to_bytes.rend();
    // It produces the chunk itself when the bytes step is skipped, and may stop at a prefix.
    if (nearest && array_bytes)
      TESSERA_RETURN_IF_ERROR((*it)->DecodePrefix(current, *array_bytes,
                                                  skip_bytes ? std::min(prefix_bytes, *array_bytes) : *array_bytes,
                                                  target));
    else
      TESSERA_RETURN_IF_ERROR((*it)->Decode(current, target));
    current = *target;
  }
  if (!skip_bytes) {
    Bytes* target = buffers.Target(stage++);
    TESSERA_RETURN_IF_ERROR(
        array_to_bytes->Decode(decoded_spec(array_to_array.size()), current, target));
    current = *target;
  }
  for (size_t i = array_to_array.size(); i-- > 0;) {
    Bytes* target = buffers.Target(stage++);
    TESSERA_RETURN_IF_ERROR(array_to_array[i]->Decode(decoded_spec(i), current, target));
    current = *target;
  }
  if (out->size() != spec.NumBytes()) {
    return CorruptData("codec chain: decoded " + std::to_string(out->size()) + " bytes, expected " +
                       std::to_string(spec.NumBytes()));
  }
  return Status::Ok();
}

std::optional<size_t> CodecChain::MaxEncodedSize(const ChunkSpec& spec) const {
  if (!array_to_bytes) return std::nullopt;
  Result<ChunkSpec> inner = ArrayToBytesSpec(spec);
  if (!inner.ok()) return std::nullopt;
  std::optional<size_t> size = array_to_bytes->MaxEncodedSize(*inner);
  for (const auto& codec : bytes_to_bytes) {
    if (!size) return std::nullopt;
    size = codec->MaxEncodedSize(*size);
  }
  return size;
}

std::optional<size_t> CodecChain::FixedEncodedSize(const ChunkSpec& spec) const {
  if (!array_to_bytes) return std::nullopt;
  Result<ChunkSpec> inner = ArrayToBytesSpec(spec);
  if (!inner.ok()) return std::nullopt;
  std::optional<size_t> size = array_to_bytes->FixedEncodedSize(*inner);
  for (const auto& codec : bytes_to_bytes) {
    if (!size) return std::nullopt;
    size = codec->FixedEncodedSize(*size);
  }
  return size;
}

nlohmann::json CodecChain::ToJson() const {
  nlohmann::json codecs = nlohmann::json::array();
  for (const auto& codec : array_to_array) codecs.push_back(codec->ToJson());
  if (array_to_bytes) codecs.push_back(array_to_bytes->ToJson());
  for (const auto& codec : bytes_to_bytes) codecs.push_back(codec->ToJson());
  return codecs;
}

}  // namespace tessera
