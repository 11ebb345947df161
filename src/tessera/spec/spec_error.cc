#include "tessera/spec/spec_error.h"

#include "tessera/spec/array_spec.h"

namespace tessera {

Status FieldError(ErrorKind kind, std::string_view field, const std::string& message) {
  return Status(kind, std::string(field) + ": " + message).WithField(std::string(field));
}
Status InvalidField(std::string_view field, const std::string& message) {
  return FieldError(ErrorKind::kInvalidArgument, field, message);
}
Status FieldNotHonoured(std::string_view field, std::string_view format_name, const std::string& why) {
  return FieldError(ErrorKind::kUnsupported, field, std::string(format_name) + " " + why);
}

std::string_view SpecFieldOfError(const Status& status) {
  const std::string& field = status.field();
  return std::string_view(field).substr(0, field.find('['));
}

Status RespellSpecField(const Status& status, std::string_view spelling) {
  if (!status.field_leads_message()) return status;
  return Status(status.kind(), std::string(spelling) + status.message().substr(status.field().size()))
      .WithField(std::string(spelling));
}

}  // namespace tessera
