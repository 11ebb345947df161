#include "tessera/api/create_array.h"

#include "tessera/api/driver_registry.h"
#include "tessera/api/shared_write.h"

namespace tessera {

Result<std::unique_ptr<Array>> CreateArray(const std::string& location, const ArraySpec& spec,
                                           const StreamOptions& options) {
  if (options.mode != Mode::kCreate && options.mode != Mode::kOverwrite)
    return InvalidArgument(location + ": mode " + std::string(ModeName(options.mode)) +
                           ": an empty array is created with mode w- (refuse what exists) or w (replace it)");
  // The format is known before anything is written, so one without region writes is refused
  // while the location is still untouched.
  Format format;
  if (options.format) {
    format = *options.format;
  } else {
    TESSERA_ASSIGN_OR_RETURN(Location parsed, ParseLocation(location));
    format = FormatFromName(parsed);
  }
  if (DriverOf(format).single_object())
    return Unsupported(location + ": " + std::string(FormatName(format)) +
                       " arrays are written whole by a stream (tessera.create); an empty array to write regions "
                       "into is Zarr v3 or precomputed");
  StreamOptions create = options;
  create.format = format;
  TESSERA_RETURN_IF_ERROR(CreateSharedArray(location, spec, create).status());
  OpenOptions open;
  open.format = format;
  open.mode = Mode::kReadWrite;
  open.storage = options.storage;
  return OpenArray(location, open);
}

}  // namespace tessera
