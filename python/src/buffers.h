// Caller buffers (the Python buffer protocol) and dtypes (tessera::DataType <-> numpy).
//
// tessera never converts or copies a caller's data: a buffer is used in place when it is
// C-contiguous and holds exactly the expected element type, and refused otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "tessera/core/dtype.h"

namespace tessera::python {

namespace nb = nanobind;

// The numpy module, imported once.
nb::module_& Numpy();

// numpy.dtype of a tessera type (native byte order, i.e. little-endian on every supported host).
nb::object NumpyDtype(DataType dtype);
// The tessera type of anything numpy.dtype() accepts ("uint16", np.uint16, np.dtype("<u2")).
// A big-endian or structured dtype, or one tessera has no equivalent for, is an error naming it.
DataType DataTypeOfNumpy(nb::handle dtype_like, const char* argument);

// A new, uninitialised C-contiguous numpy array, and where its data lives.
struct NewArray {
  nb::object array;
  uint8_t* data = nullptr;
};
NewArray EmptyArray(const std::vector<int64_t>& shape, DataType dtype);

// A borrowed view of a Python object's memory (the buffer protocol). Holding it keeps the
// exporter from resizing or freeing the memory; release it (destroy it) with the GIL held.
class BufferView {
 public:
  // Exports `obj`'s buffer (writable when `writable`). Objects without the buffer protocol that
  // expose __array_interface__ are wrapped by numpy.asarray (a view, never a copy of the data).
  // Errors (TypeError / InvalidArgumentError) start with `what`.
  BufferView(nb::handle obj, bool writable, const char* what);
  ~BufferView();
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;

  uint8_t* data() const { return static_cast<uint8_t*>(view_.buf); }
  int64_t size_bytes() const { return view_.len; }
  std::vector<int64_t> shape() const;
  // Refuses (InvalidArgumentError) a buffer that is not C-contiguous, and (TypeError) one whose
  // elements are not `dtype`, naming both types.
  void RequireContiguous() const;
  void RequireDtype(DataType dtype) const;

 private:
  std::string DtypeText() const;  // how the caller's element type is named in messages

  nb::object owner_;  // the exporting object (numpy.asarray's result for __array_interface__)
  Py_buffer view_{};
  bool held_ = false;
  std::string what_;
};

std::string ShapeText(const std::vector<int64_t>& shape);  // "(2, 3)", "(5,)", "()"

}  // namespace tessera::python
