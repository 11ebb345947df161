#include "tessera/hdf5/hdf5_shared_file.h"

#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "tessera/driver/driver_support.h"
#include "tessera/hdf5/h5_chunk_log.h"
#include "tessera/hdf5/h5_spill_file.h"
#include "tessera/hdf5/h5_writer.h"
#include "tessera/hdf5/hdf5_file_target.h"
#include "tessera/hdf5/hdf5_spec_options.h"
#include "tessera/hdf5/hdf5_stream.h"
#include "tessera/spec/spec_error.h"
#include "tessera/store/writable_file.h"

namespace tessera::hdf5 {
namespace {

// The file of a discarding acquisition: every byte dropped, nothing committed.
class DiscardingWritableFile final : public WritableFile {
 public:
  explicit DiscardingWritableFile(std::string description) : description_(std::move(description)) {}
  Status WriteAt(uint64_t, ByteView) override { return Status::Ok(); }
  Status Truncate(uint64_t) override { return Status::Ok(); }
  Status Commit() override { return Status::Ok(); }
  void Abandon() override {}
  std::string Describe() const override { return description_; }

 private:
  const std::string description_;
};

// The directory a local file's spills go in: its own.
std::string DirectoryOf(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

struct SharedHdf5File::State {
  struct Dataset {
    std::string path;                  // canonical ("/plate/A/1/0")
    H5DatasetWriter* writer = nullptr;  // owned by `file`
    SpillFile* spill = nullptr;        // null: laid out in the file itself; owned by `stream`
    std::shared_ptr<Hdf5SinkAndWriter> stream;
    bool finished = false;
    bool abandoned = false;
  };

  std::optional<LocationObject> remote;  // an object store's: outlives `file`
  std::unique_ptr<H5Writer> file;
  std::string spill_directory;           // empty: nothing spills (discarding)
  std::mutex mu;                          // the fields below
  // In opening order: their order in the file. Destroyed before `file`, whose datasets the
  // streams' sinks record their chunks with.
  std::vector<Dataset> datasets;
  bool done = false;                      // closed or abandoned

  void AbandonLocked() {
    if (done) return;
    done = true;
    file->Abandon();
    ReleaseSpillsLocked();
  }
  // The spills' disk space back now, not when the last writer lets go of the state.
  void ReleaseSpillsLocked() {
    for (Dataset& d : datasets)
      if (d.spill != nullptr) d.spill->Release();
  }
};

Result<std::unique_ptr<SharedHdf5File>> SharedHdf5File::Create(const Location& location, bool discard) {
  auto state = std::make_shared<State>();
  if (discard) {
    TESSERA_ASSIGN_OR_RETURN(state->file,
                             H5Writer::Create(std::make_unique<DiscardingWritableFile>(location.ToString())));
  } else {
    TESSERA_ASSIGN_OR_RETURN(Hdf5FileTarget target, CreateHdf5FileTarget(location));
    state->remote = std::move(target.remote);
    state->file = std::move(target.file);
    // Beside a local file; an object store's file is staged under TMPDIR, its spills go there too.
    state->spill_directory =
        location.is_file() ? DirectoryOf(location.path) : std::filesystem::temp_directory_path().string();
  }
  return std::unique_ptr<SharedHdf5File>(new SharedHdf5File(std::move(state)));
}

SharedHdf5File::~SharedHdf5File() { Abandon(); }

const std::string& SharedHdf5File::path() const { return state_->file->path(); }

Result<driver::FormatWriter> SharedHdf5File::OpenDataset(const ArraySpec& resolved_spec, const std::string& path,
                                                         const driver::WriterSettings& settings) {
  if (settings.backend != stream::Backend::kCpu)
    return FieldError(ErrorKind::kUnsupported, "backend", "hdf5 datasets are filtered on the CPU backend only");
  if (resolved_spec.level_count() > 1)
    return FieldError(ErrorKind::kUnsupported, "pyramid",
                      path + ": HDF5 datasets have no multiscale levels (write zarr3 or precomputed)");
  TESSERA_ASSIGN_OR_RETURN(Hdf5StreamOptions options, Hdf5StreamOptionsOf(resolved_spec));
  options.dataset = path;
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.done) return FailedPrecondition(path + ": " + s.file->path() + " is already closed or abandoned");
  if (s.file->KindOf(path) != H5Writer::ObjectKind::kAbsent)
    return InvalidArgument(s.file->path() + ": " + path + " already exists");

  // The first dataset lays its chunks out in the file itself; the others spill (see the header).
  const bool direct = s.spill_directory.empty() || s.datasets.empty();
  std::unique_ptr<ChunkSpace> space;
  SpillFile* spill = nullptr;
  if (direct) {
    space = std::make_unique<FileChunkSpace>(s.file.get());
  } else {
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SpillFile> made,
                             SpillFile::Create(s.spill_directory, "spill of " + path + " for " + s.file->path()));
    spill = made.get();
    space = std::move(made);
  }
  // The chunk index on disk too (h5_chunk_log.h), so memory does not grow with the stream.
  std::shared_ptr<ChunkLog> log;
  if (!s.spill_directory.empty())
    log = std::make_shared<ChunkLog>(s.spill_directory, "chunk log of " + path + " for " + s.file->path());
  auto stream = std::make_shared<Hdf5SinkAndWriter>();
  TESSERA_ASSIGN_OR_RETURN(*stream, OpenHdf5Stream(s.file.get(), std::move(space), std::move(log), options,
                                                   driver::StreamWriterOptionsOf(settings)));
  const size_t index = s.datasets.size();
  s.datasets.push_back({stream->dataset->path(), stream->dataset, spill, stream});

  // The state owns the stream (its spill is appended at Close even if the caller dropped the
  // writer); the writer keeps the state alive.
  std::shared_ptr<State> held = state_;
  driver::FormatWriter out;
  out.writer = stream->writer.get();
  out.finish = [held, index] {
    std::lock_guard<std::mutex> lock(held->mu);
    held->datasets[index].finished = true;
    return Status::Ok();
  };
  out.abandon = [held, index] {
    std::lock_guard<std::mutex> lock(held->mu);
    held->datasets[index].abandoned = true;
  };
  out.keep_alive = held;
  return out;
}

Status SharedHdf5File::SetAttributes(const std::string& path, const nlohmann::json& attributes) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<Attribute> converted, Hdf5AttributesOf(attributes));
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.done) return FailedPrecondition(path + ": " + s.file->path() + " is already closed or abandoned");
  return s.file->SetAttributes(path, std::move(converted));
}

Status SharedHdf5File::Close() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.done) return FailedPrecondition(s.file->path() + ": closed twice, or after Abandon");
  Status st = [&]() -> Status {
    for (const State::Dataset& d : s.datasets) {
      if (d.abandoned)
        return FailedPrecondition(s.file->path() + ": dataset " + d.path + " was abandoned; the file is not written");
      if (!d.finished)
        return FailedPrecondition(s.file->path() + ": dataset " + d.path + "'s stream is not closed");
    }
    // Each spill lands after the file's chunks so far, in opening order.
    for (const State::Dataset& d : s.datasets) {
      if (d.spill == nullptr) continue;
      const uint64_t address = s.file->Allocate(d.spill->size());
      TESSERA_RETURN_IF_ERROR(d.spill->CopyInto(*s.file, address));
      d.spill->Release();
      d.writer->ShiftChunkAddresses(address);
    }
    return s.file->Close();
  }();
  s.done = true;
  s.ReleaseSpillsLocked();
  if (!st.ok()) s.file->Abandon();  // H5Writer::Close abandons on its own failure; again is harmless
  return st;
}

void SharedHdf5File::Abandon() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->AbandonLocked();
}

}  // namespace tessera::hdf5
