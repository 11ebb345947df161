#include "tessera/stream/epoch_encoder.h"

namespace tessera::stream {

Result<Backend> ParseBackend(const std::string& name) {
  if (name == "cpu") return Backend::kCpu;
  if (name == "cuda") return Backend::kCuda;
  return InvalidArgument("backend: must be cpu or cuda, not \"" + name + "\"").WithField("backend");
}

}  // namespace tessera::stream
