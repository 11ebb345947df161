// How an array is opened or created, spelled as zarr-python and h5py spell it.
//
//   r   read only; the array must exist (the default of OpenArray)
//   r+  read and write regions, resize; the array must exist
//   a   append: continue an existing array along dimension 0 with its stored spec, or create it
//   w   create, replacing whatever is there (the old array is removed wholly first)
//   w-  create; an error naming what exists if anything does (the default of CreateStream)
#pragma once

#include <string>
#include <string_view>

#include "tessera/core/status.h"

namespace tessera {

enum class Mode { kRead, kReadWrite, kAppend, kOverwrite, kCreate };

inline std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kRead: return "r";
    case Mode::kReadWrite: return "r+";
    case Mode::kAppend: return "a";
    case Mode::kOverwrite: return "w";
    case Mode::kCreate: return "w-";
  }
  return "?";
}

// "r", "r+", "a", "w", "w-" (and "x", h5py's spelling of "w-"); anything else is kInvalidArgument.
inline Result<Mode> ParseMode(std::string_view text) {
  if (text == "r") return Mode::kRead;
  if (text == "r+") return Mode::kReadWrite;
  if (text == "a") return Mode::kAppend;
  if (text == "w") return Mode::kOverwrite;
  if (text == "w-" || text == "x") return Mode::kCreate;
  return InvalidArgument("mode '" + std::string(text) + "': expected one of r, r+, a, w, w-");
}

}  // namespace tessera
