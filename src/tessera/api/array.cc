#include "tessera/api/array.h"

#include "tessera/api/driver_registry.h"

namespace tessera {

Array::Array(Format format, Location location, driver::OpenedArray opened)
    : format_(format),
      location_(std::move(location)),
      source_(std::move(opened.source)),
      shard_shape_(std::move(opened.shard_shape)),
      metadata_(std::move(opened.metadata)),
      description_(std::move(opened.description)),
      level_(opened.level),
      level_count_(opened.level_count) {}

Result<Hyperslab> Array::Select(std::string_view expression) const {
  return ParseSliceExpression(expression, shape());
}

Status Array::Read(const Hyperslab& selection, void* out, const ReadOptions& options) const {
  return ReadHyperslab(*source_, selection, static_cast<uint8_t*>(out), options);
}

Result<std::unique_ptr<Array>> OpenArray(const std::string& text, const OpenOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(Location location, ParseLocation(text));
  Format format;
  if (options.format) {
    format = *options.format;
  } else {
    TESSERA_ASSIGN_OR_RETURN(format, DetectFormat(location));
  }
  TESSERA_ASSIGN_OR_RETURN(driver::OpenedArray opened, DriverOf(format).Open(location, options));
  return std::make_unique<Array>(format, std::move(location), std::move(opened));
}

}  // namespace tessera
