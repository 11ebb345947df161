#include "tessera/hdf5/hdf5_file_target.h"

#include "tessera/store/writable_file.h"

namespace tessera::hdf5 {

Result<Hdf5FileTarget> CreateHdf5FileTarget(const Location& location) {
  Hdf5FileTarget target;
  if (location.is_file()) {
    TESSERA_ASSIGN_OR_RETURN(target.file, H5Writer::Create(location.path));
    return target;
  }
  TESSERA_ASSIGN_OR_RETURN(target.remote, OpenLocationObject(location, /*create=*/true));
  TESSERA_RETURN_IF_ERROR(target.remote->store->Size(target.remote->key).status());
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, target.remote->store->OpenWritableFile(target.remote->key));
  TESSERA_ASSIGN_OR_RETURN(target.file, H5Writer::Create(std::move(file)));
  return target;
}

}  // namespace tessera::hdf5
