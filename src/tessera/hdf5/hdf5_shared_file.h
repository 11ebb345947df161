// One HDF5 file holding several datasets streamed at once (an acquisition's arrays: "/cam1",
// "/cam2", "/plate/A/1/0"), each fed by its own StreamWriter from one producer thread, the
// writers' worker threads filtering and storing chunks concurrently.
//
// Deterministic layout. A single-dataset stream lays its chunks out in a fixed order (row by row,
// each row's chunks in grid order: Hdf5ChunkSink), so its file depends only on what was appended.
// Several datasets sharing one address space would interleave their chunks by timing. Instead
// each dataset owns a contiguous region of the file, in the order the datasets were opened:
//
//   [superblock] [dataset 1's chunks] [dataset 2's chunks] ... [B-trees, headers, groups]
//
// The first dataset opened lays its chunks out straight into the file (as a single-dataset
// stream does); every later one lays its chunks out, in its own fixed order, in a spill file of
// its own, which Close appends to the file in opening order, shifting the chunks' recorded
// addresses by where the spill landed. So the same opens and appends give the same bytes however
// the threads interleave, and whatever thread count each writer runs with.
//
// Memory stays flat whatever the stream's length: chunks go to disk as they are laid out (the
// writers' in-flight chunks aside), and so does each dataset's chunk index: a 32-byte record per
// chunk in a chunk log (h5_chunk_log.h), replayed at Close into the chunk B-tree, which keeps
// only the first and last chunk of each leaf (1/32 of them). The price is that the later
// datasets' chunk bytes are written twice (spill, then file); Close copies them in 8 MiB blocks.
//
// Spill files and chunk logs are unnamed (O_TMPFILE, or unlinked as soon as made): nothing of
// them outlives the process, even on kill -9. They sit beside the target file when it is local
// (the disk the caller chose for the data, not TMPDIR, which may be memory), else under TMPDIR,
// where an object store's staged file goes too.
//
// Write-once, as a single-dataset HDF5 stream: the file is built under a temporary name (on an
// object store, staged) and appears whole at Close, or not at all (Abandon, a failed Close, or
// destruction without Close). A kill -9 leaves the store's hidden temporary file beside the
// target, as a single HDF5 stream does, never a file under the target's name.
//
// Thread-safety: one thread (the producer) calls OpenDataset, SetAttributes, Close
// and Abandon; the writers' threads store chunks concurrently with SetAttributes and OpenDataset.
// Close and Abandon come after every dataset's writer has been closed (or aborted).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"
#include "tessera/driver/format_driver.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"

namespace tessera::hdf5 {

class SharedHdf5File {
 public:
  // Starts the file that will be `location` at Close (a local path or an object-store key; the
  // local file's directory must exist). `discard`: run every dataset's pipeline and store nothing
  // (benchmarks): no file, no spill, the chunk index in memory.
  static Result<std::unique_ptr<SharedHdf5File>> Create(const Location& location, bool discard);
  ~SharedHdf5File();  // abandons the file unless Close succeeded

  SharedHdf5File(const SharedHdf5File&) = delete;
  SharedHdf5File& operator=(const SharedHdf5File&) = delete;

  // Opens a stream into a new dataset at `path` ("/cam1", "plate/A/1/0"; groups on the way are
  // created as needed) with the options of `resolved_spec` (the HDF5 driver's ResolveSpec ran:
  // dtype, shape, chunks, gzip level, shuffle, fletcher32, fill value, attributes; its own
  // dataset name is not used; a pyramid is kUnsupported). The writer takes the input in stored
  // order: a spec's arrival_order is the caller's to apply (writer->SetArrivalOrder before the
  // first Append), as for the driver's OpenWriter. The writer's `finish` marks the dataset
  // complete (the file is written at Close); `abandon` marks it failed, so Close refuses. The
  // writer may outlive this object (keep_alive holds what it needs).
  Result<driver::FormatWriter> OpenDataset(const ArraySpec& resolved_spec, const std::string& path,
                                           const driver::WriterSettings& settings);

  // Replaces the attributes of the group or dataset at `path` ("" or "/": the root group; groups
  // exist once a dataset below them is opened) with `attributes` (a JSON object of numbers,
  // strings and 1-D numeric arrays), written at Close. kNotFound when nothing is there.
  Status SetAttributes(const std::string& path, const nlohmann::json& attributes);

  // After every dataset's writer closed and finished: appends the spilled datasets, writes the
  // chunk B-trees, headers and groups, and commits the file (renames it into place, or uploads
  // it). A dataset not finished, or abandoned, is kFailedPrecondition naming it. On any failure
  // the file is abandoned.
  Status Close();
  // Removes the temporary file and the spills; the target is left as it was. Safe to repeat.
  void Abandon();

  // Where the file goes, for messages.
  const std::string& path() const;

  struct State;

 private:
  explicit SharedHdf5File(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;  // shared with the datasets' writers (FormatWriter::keep_alive)
};

}  // namespace tessera::hdf5
