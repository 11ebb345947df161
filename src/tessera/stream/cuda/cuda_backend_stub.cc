// Compiled when the build has no CUDA support: the CUDA backend reports why it is unavailable.
#include "tessera/stream/epoch_encoder.h"

namespace tessera::stream {

bool CudaBackendCompiled() { return false; }

Result<std::unique_ptr<EpochEncoder>> MakeCudaEpochEncoder(const StreamLayout&, const CodecChain&, const FillValue&,
                                                           int) {
  return Unsupported(
      "backend: cuda: this build has no CUDA backend (nvcc or nvcomp was not found when it was configured; "
      "scripts/setup.sh installs nvcomp into .venv, then rebuild)")
      .WithField("backend");
}

}  // namespace tessera::stream
