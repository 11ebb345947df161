// Errors about one field of an ArraySpec, in the words every front end respells: the Status
// carries the field (Status::field()) and its message starts with it ("chunk_shape: ..."); see
// SpecFieldOfError and RespellSpecField.
#pragma once

#include <string>
#include <string_view>

#include "tessera/core/status.h"

namespace tessera {

// An error of `kind` about `field`: the message "<field>: <message>", the Status's field `field`.
Status FieldError(ErrorKind kind, std::string_view field, const std::string& message);
// kInvalidArgument about `field`.
Status InvalidField(std::string_view field, const std::string& message);
// kUnsupported: the format named `format_name` cannot honour `field` ("<format> <why>").
Status FieldNotHonoured(std::string_view field, std::string_view format_name, const std::string& why);

}  // namespace tessera
