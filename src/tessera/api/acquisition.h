// Several arrays streamed at once under one root, as a microscope acquisition writes them: one
// array per camera, label images beside an image, an HCS plate's fields of view.
//
//   AcquisitionOptions o;  o.threads = 8;  o.memory_limit = int64_t{4} << 30;
//   auto acq = Acquisition::Create("acq.ome.zarr", o).value();   // the root group, first
//   Stream* cam1 = acq->CreateArray("cam1", cam_spec).value();    // an OME image: cam1/0, cam1/1, ...
//   Stream* cam2 = acq->CreateArray("cam2", cam_spec).value();
//   Stream* cells = acq->CreateLabels("cam1", "cells", label_spec, colours).value();
//   cam1->Append(frame1); cam2->Append(frame2); ...            // one producer thread
//   acq->SetAttributes("", {{"instrument", "..."}});              // published at the next Flush
//   acq->Close();
//
// Zarr v3: the root and every group on the way to an array are Zarr groups, written before the
// array, so the hierarchy opens (zarr-python, tessera, ome-zarr) while it streams; an OME-Zarr
// image's group, a `labels` group and a plate's groups carry their OME-Zarr 0.5 metadata. HDF5: the
// arrays are datasets of one file (written at Close, as a single HDF5 stream is). Precomputed:
// each array is a volume in its own directory; there are no groups.
//
// All arrays share one pool of compression threads (`threads`) and one memory budget
// (`memory_limit`): an array whose plan would take the planned peaks of all arrays past it is
// refused, naming it and the sums. The plan (DescribePlan) lists each array's plan and the total.
// Each array has one epoch buffer by default (`input_buffers`): a stream of its own has two, so
// that it fills one while the other is encoded; in an acquisition the arrays overlap one another.
//
// Failure: an error from any array, or Abort, ends the acquisition; every array keeps what it
// published (what a kill -9 at that moment leaves) and every group written stays. Not
// thread-safe: one producer thread drives the acquisition and its streams.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/api/stream.h"
#include "tessera/core/worker_pool.h"
#include "tessera/pyramid/ome_collections.h"
#include "tessera/spec/array_spec.h"

namespace tessera {

struct AcquisitionOptions {
  std::optional<Format> format;  // unset: from the root's name (".h5": HDF5, else Zarr v3)
  int threads = 0;               // the shared compression threads; 0 = hardware threads
  Mode mode = Mode::kCreate;     // w- (refuse anything at the root) or w (replace it)
  int64_t memory_limit = 0;      // bytes all arrays' planned peaks may take together; 0 = no limit
  // Epoch buffers per array (CPU backend): 1 (each array refills its buffer once it is encoded;
  // the other arrays' input and encoding fill that time) or 2 (one fills while the other is
  // encoded: for an acquisition of one array, at the memory of another epoch).
  int input_buffers = 1;
  nlohmann::json attributes = nlohmann::json::object();  // the root group's
  stream::Backend backend = stream::Backend::kCpu;
  // How to reach an object store instead of the environment (store/store_options.h).
  StoreOptions storage;
};

class Acquisition {
 public:
  // Creates the root (a Zarr group, an HDF5 file to be, a directory) and the shared pool.
  static Result<std::unique_ptr<Acquisition>> Create(const std::string& root, const AcquisitionOptions& options = {});
  ~Acquisition();  // an acquisition destroyed without Close is aborted

  // Creates the array (or OME image, with `spec`'s pyramid) at root/`key` ("cam1", "a/b/c") and
  // returns its stream, owned by the acquisition. Groups on the way are created. Under a plate
  // (CreatePlate), "plate/B/3/0" is a field of view: an OME image, its row and well groups and the
  // plate's wells list written or rewritten first.
  // `acquisition`: a field's plate acquisition id (only for a field of view).
  Result<Stream*> CreateArray(const std::string& key, const ArraySpec& spec,
                              std::optional<int> acquisition = std::nullopt);
  // Creates the label image `name` of the OME image at `image_key`: root/image_key/labels/name,
  // an OME image with `label`'s image-label metadata, its levels those of the image (downsampled
  // by mode unless `spec` says otherwise); the labels group lists it.
  Result<Stream*> CreateLabels(const std::string& image_key, const std::string& name, const ArraySpec& spec,
                               const pyramid::OmeImageLabel& label = {});
  // Creates an HCS plate group at root/`key`; its wells and fields come with CreateArray.
  Status CreatePlate(const std::string& key, const pyramid::OmePlate& plate);

  // Replaces the caller's attributes of the group or array at `path` ("" is the root); published
  // at the next Flush and at Close.
  Status SetAttributes(const std::string& path, nlohmann::json attributes);

  Stream* Find(const std::string& key) const;  // null: no such array
  std::vector<std::string> keys() const;       // the arrays, in creation order
  Status Append(const std::string& key, ByteView bytes);

  // Flushes every open array (each publishes what it has) and publishes changed attributes.
  Status Flush();
  // Closes every array still open, publishes the attributes and ends the acquisition.
  Status Close();
  void Abort();

  Format format() const;
  // Each array's plan, the shared pool and the memory budget.
  std::string DescribePlan() const;
  int64_t planned_peak_bytes() const;

  struct Impl;

 private:
  explicit Acquisition(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
