#include "tessera/hdf5/hdf5_multi_array_file.h"

#include "tessera/hdf5/hdf5_shared_file.h"

namespace tessera::hdf5 {
namespace {

class Hdf5MultiArrayFile final : public driver::MultiArrayFile {
 public:
  explicit Hdf5MultiArrayFile(std::unique_ptr<SharedHdf5File> file) : file_(std::move(file)) {}

  Result<driver::FormatWriter> OpenArray(const ArraySpec& resolved, const std::string& path,
                                         const driver::WriterSettings& settings) override {
    if (resolved.multiscale())
      return Unsupported("pyramid: an HDF5 acquisition's datasets have one level").WithField("pyramid");
    return file_->OpenDataset(resolved, path, settings);
  }
  Status SetAttributes(const std::string& path, const nlohmann::json& attributes) override {
    return file_->SetAttributes(path, attributes);
  }
  Status Close() override { return file_->Close(); }
  void Abandon() override { file_->Abandon(); }

 private:
  std::unique_ptr<SharedHdf5File> file_;
};

}  // namespace

Result<std::unique_ptr<driver::MultiArrayFile>> CreateHdf5MultiArrayFile(const Location& location) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SharedHdf5File> file, SharedHdf5File::Create(location, /*discard=*/false));
  return std::unique_ptr<driver::MultiArrayFile>(std::make_unique<Hdf5MultiArrayFile>(std::move(file)));
}

}  // namespace tessera::hdf5
