#include "errors.h"

#include <array>
#include <string_view>
#include <utility>

#include <nanobind/nanobind.h>

#include "tessera/spec/array_spec.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {

// The Python class of each ErrorKind, indexed by the kind's value. Strong references held for the
// life of the process (exception classes outlive every module that raises them).
std::array<PyObject*, 10> g_error_classes{};

constexpr std::pair<ErrorKind, const char*> kClassNames[] = {
    {ErrorKind::kInvalidArgument, "InvalidArgumentError"},
    {ErrorKind::kOutOfRange, "OutOfRangeError"},
    {ErrorKind::kNotFound, "NotFoundError"},
    {ErrorKind::kCorruptData, "CorruptDataError"},
    {ErrorKind::kIo, "IoError"},
    {ErrorKind::kUnsupported, "UnsupportedError"},
    {ErrorKind::kOutOfResources, "OutOfResourcesError"},
    {ErrorKind::kFailedPrecondition, "FailedPreconditionError"},
    {ErrorKind::kAlreadyExists, "AlreadyExistsError"},
};

PyObject* ClassOf(ErrorKind kind) {
  const size_t i = static_cast<size_t>(kind);
  PyObject* cls = i < g_error_classes.size() ? g_error_classes[i] : nullptr;
  return cls != nullptr ? cls : g_error_classes[0];  // [0] holds tessera.Error itself
}

void Translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const StatusError& e) {
    PyErr_SetString(ClassOf(e.kind()), e.what());
  }
}

}  // namespace

std::string PythonArgumentOfSpecField(std::string_view field) {
  // A JSON path's field by its last member ("precomputed.resolution_xyz" -> "resolution_xyz").
  const size_t dot = field.rfind('.');
  if (dot != std::string_view::npos) field = field.substr(dot + 1);
  // The library's field names (ArraySpec members and ResolveSpec's spellings) whose Python
  // argument is spelled differently. Every other field keeps its name.
  static constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
      {"chunk_shape", "chunks"},
      {"index_at_start", "index_location"},
      {"cseg_block_xyz", "cseg_block"},
      {"resolution_xyz", "resolution"},
      {"voxel_offset_xyz", "voxel_offset"},
      {"levels", "pyramid"},
      {"method", "downsample"},
      {"factors", "downsample_factors"},
      {"image", "ome"},
  };
  for (const auto& [library, python] : kRenamed) {
    if (field == library) return std::string(python);
  }
  return std::string(field);
}

void ThrowIfSpecError(const Status& status) {
  if (status.ok()) return;
  throw StatusError(RespellSpecField(status, PythonArgumentOfSpecField(SpecFieldOfError(status))));
}

void RegisterErrorTranslator() {
  nb::module_ errors = nb::module_::import_("tessera._errors");
  g_error_classes[0] = errors.attr("Error").inc_ref().ptr();
  for (const auto& [kind, name] : kClassNames) {
    g_error_classes[static_cast<size_t>(kind)] = errors.attr(name).inc_ref().ptr();
  }
  nb::register_exception_translator(&Translate);
}

}  // namespace tessera::python
