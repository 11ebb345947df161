#include "tessera/driver/format_driver.h"

#include "tessera/core/chunk_shape.h"

namespace tessera::driver {

std::vector<int64_t> FormatDriver::FallbackChunkShape(const ArraySpec& s) const {
  return AutoChunkShape(s.shape, false, ItemSize(s.dtype));
}

Result<std::unique_ptr<RegionTarget>> FormatDriver::OpenRegionTarget(const Location& location,
                                                                     const OpenOptions&) const {
  return Unsupported(location.ToString() + ": writing regions of " + std::string(name()) + " arrays is not supported");
}

Result<CopyTarget> FormatDriver::OpenCopyTarget(const ArraySpec&, const Location& location) const {
  return Unsupported(location.ToString() + ": copying region by region into " + std::string(name()) +
                     " arrays is not supported");
}

Result<std::unique_ptr<MultiArrayFile>> FormatDriver::CreateMultiArrayFile(const Location&) const {
  return std::unique_ptr<MultiArrayFile>();
}

Result<PyramidSpec> FormatDriver::StoredPyramid(const Location& location) const {
  return Unsupported(location.ToString() + ": continuing a multiscale " + std::string(name()) +
                     " image (mode a) is not supported");
}

Result<FormatWriter> FormatDriver::OpenAppendWriter(const ArraySpec&, const Location& location,
                                                   const WriterSettings&, int64_t, int64_t) const {
  return Unsupported(location.ToString() + ": continuing " + std::string(name()) +
                     " arrays (mode a) is not supported");
}

Result<std::string> FormatDriver::DescribeStored(const Location&) const { return "a " + std::string(stored_as()); }

Status FormatDriver::Remove(const Location& location) const {
  return Unsupported(location.ToString() + ": replacing " + std::string(name()) + " arrays is not supported");
}

}  // namespace tessera::driver
