// OME-Zarr 0.5 metadata of the groups that collect images: the `labels` group of an image and its
// label images' `image-label`, and a high-content-screening plate with its wells. Pure JSON
// building and checking, no I/O; the image metadata itself is in ome.h.
//
//   plate.zarr/            PlateAttributes: rows, columns, wells "A/1", acquisitions
//     A/1/                 WellAttributes: its fields of view "0", "1" (and their acquisition)
//       0/                 an image (ome.h)
//         labels/          LabelsGroupAttributes: the label images' names
//           cells/         an image (ome.h) whose `ome` also holds ImageLabelMember
//
// Each builder returns a group's whole `attributes` object ({"ome": {"version": "0.5", ...}})
// except ImageLabelMember, which goes beside the label image's multiscales. Builders assume their
// input passed the matching Check*; the checks name the field at fault ("plate.rows[2].name").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"

namespace tessera::pyramid {

// --- labels ---------------------------------------------------------------------------------

// The `labels` group's attributes: {"ome": {"version": "0.5", "labels": [names...]}}, the paths
// of its label images relative to it, in the order given.
nlohmann::json LabelsGroupAttributes(const std::vector<std::string>& names);

struct OmeLabelColor {
  int64_t label_value = 0;
  std::array<int, 4> rgba{};  // red, green, blue, alpha (opacity), each 0 to 255
};

struct OmeImageLabel {
  std::vector<OmeLabelColor> colors;                      // empty: no "colors"
  nlohmann::json properties = nlohmann::json::array();    // objects, each with an integer
                                                          // "label-value"; empty: no "properties"
  std::string source_image = "../../";                    // the image, relative to the label
                                                          // image; empty: no "source"
};

// What OME-Zarr 0.5 and its validators ask of an image-label: rgba values 0 to 255, label values
// unique among the colours and among the properties, each property an object with an integer
// "label-value", and (ome-zarr-models checks this) the same label values in both lists when
// both are given. Errors name the field, "image-label.colors[1].rgba".
Status CheckImageLabel(const OmeImageLabel& label);

// The object at attributes.ome["image-label"] of a label image: its version, colours as
// [{"label-value": v, "rgba": [r, g, b, a]}], properties and source {"image": "../../"}.
nlohmann::json ImageLabelMember(const OmeImageLabel& label);

// --- plates ---------------------------------------------------------------------------------

struct OmeAcquisition {
  int id = 0;                          // unique in the plate, >= 0; what a well's image names
  std::string name;                    // empty: unset (and so below)
  int maximum_field_count = 0;         // 0: unset; else > 0
  std::string description;
  std::optional<int64_t> start_time;   // epoch timestamps
  std::optional<int64_t> end_time;
};

struct OmePlate {
  std::string name;                    // empty: unset
  std::vector<std::string> rows;       // every row of the physical plate, "A", "B", ...
  std::vector<std::string> columns;    // every column, "1", "2", ...
  int field_count = 0;                 // most fields of view in a well; 0: unset
  std::vector<OmeAcquisition> acquisitions;
};

// What OME-Zarr 0.5 asks of a plate: at least one row and one column, their names alphanumeric
// and unique (also ignoring case, so that the well directories stay apart on a case-insensitive
// file system), field_count >= 0, acquisition ids >= 0 and unique, maximum field counts >= 0.
Status CheckPlate(const OmePlate& plate);

// A well by its indices into the plate's rows and columns.
struct OmeWell {
  int row_index = 0;
  int column_index = 0;
  auto operator<=>(const OmeWell&) const = default;
};

// The plate group's attributes: {"ome": {"version": "0.5", "plate": {...}}} with the wells that
// hold fields of view sorted by (rowIndex, columnIndex), each once, at path "<row>/<column>".
// Precondition: CheckPlate(plate) passes and each well's indices are in range (ParseFieldPath's
// are).
nlohmann::json PlateAttributes(const OmePlate& plate, std::vector<OmeWell> wells);

// A field of view of a well, its image group's name in the well.
struct OmeWellImage {
  std::string path;                    // "0", "1", ...: alphanumeric
  std::optional<int> acquisition;      // the plate acquisition's id
};

// What OME-Zarr 0.5 asks of a well in `plate`: image paths alphanumeric and unique, no more of
// them than the plate's field_count (when set), each acquisition one of the plate's, and one named
// on every image when the plate has several acquisitions.
Status CheckWell(const OmePlate& plate, const std::vector<OmeWellImage>& images);

// A well group's attributes: {"ome": {"version": "0.5", "well": {"images": [...]}}}, images in
// the order given. Precondition: CheckWell passes.
nlohmann::json WellAttributes(const std::vector<OmeWellImage>& images);

// Where a field of view goes in the plate: "A/1/0" (relative to the plate group) is row "A",
// column "1", field "0".
struct OmeFieldPath {
  OmeWell well;
  std::string field;
};

// Parses a field path relative to the plate: three parts, a row and a column of `plate`, and an
// alphanumeric field name. Errors name the path and the plate's rows or columns.
Result<OmeFieldPath> ParseFieldPath(const OmePlate& plate, std::string_view path);

}  // namespace tessera::pyramid
