// Errors about one field of an ArraySpec, in the words every front end respells: the message
// starts with the field ("chunk_shape: ..."); see SpecFieldOfError and RespellSpecField.
#pragma once

#include <string>
#include <string_view>

#include "tessera/core/status.h"

namespace tessera {

Status FieldError(ErrorKind kind, std::string_view field, const std::string& message);
// kInvalidArgument about `field`.
Status InvalidField(std::string_view field, const std::string& message);
// kUnsupported: the format named `format_name` cannot honour `field` ("<format> <why>").
Status FieldNotHonoured(std::string_view field, std::string_view format_name, const std::string& why);

}  // namespace tessera
