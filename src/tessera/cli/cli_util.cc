#include "tessera/cli/cli_util.h"

#include <cerrno>
#include <string_view>
#include <utility>
#include <cstring>
#include <sstream>

#include "tessera/spec/array_spec.h"
#include "tessera/store/file_store.h"

namespace tessera::cli {

namespace {

// The command-line spelling of the library's fields (ArraySpec, OpenOptions, StreamOptions), by
// the field's name: ResolveSpec's ("chunk_shape") or the last member of a JSON path's
// ("precomputed.resolution_xyz" -> "resolution_xyz", "pyramid.method" -> "method").
constexpr std::pair<std::string_view, std::string_view> kFlagOfField[] = {
    {"dtype", "--dtype"},           {"shape", "--shape"},
    {"chunk_shape", "--chunk"},     {"shard_chunks", "--shard-chunks"},
    {"codec", "--codec"},           {"level", "--level"},
    {"fill_value", "--fill-value"}, {"attributes", "--attribute"},
    {"index_at_start", "--index-location"}, {"encoding", "--encoding"},
    {"cseg_block_xyz", "--cseg-block"},     {"hash", "--hash"},
    {"jpeg_quality", "--jpeg-quality"},     {"png_level", "--png-level"},
    {"resolution_xyz", "--resolution"},     {"voxel_offset_xyz", "--voxel-offset"},
    {"scale_key", "--scale-key"},   {"dataset", "--dataset"},
    {"shuffle", "--shuffle"},       {"fletcher32", "--fletcher32"},
    {"backend", "--backend"},       {"discard", "--sink discard"},
    {"threads", "--threads"},       {"dimension_names", "dimension names"},
    {"scale", "--scale"},           {"location", "STORE"},
    {"format", "--format"},         {"pyramid", "--pyramid"},
    {"levels", "--pyramid"},        {"method", "--downsample"},
    {"downsample", "--downsample"}, {"downsample_factors", "--downsample-factors"},
    {"translation", "--translation"}, {"arrival_order", "--arrival-order"},
    {"factors", "--downsample-factors"}, {"axes", "--axes"},
    {"voxel_size", "--voxel-size"}, {"image", "--ome"},
    {"cname", "--cname"},           {"typesize", "--typesize"},
    {"blocksize", "--blocksize"}};

}  // namespace

std::string_view FieldName(const Status& status) {
  const std::string_view field = SpecFieldOfError(status);
  const size_t dot = field.rfind('.');
  return dot == std::string_view::npos ? field : field.substr(dot + 1);
}

Status WithFlagNames(const Status& status) {
  const std::string_view field = FieldName(status);
  for (const auto& [name, flag] : kFlagOfField)
    if (name == field) return RespellSpecField(status, flag);
  return status;
}

Status WithOverwriteHint(const Status& status) {
  if (status.kind() != ErrorKind::kAlreadyExists) return status;
  return Status(status.kind(), status.message() + " (--overwrite)");
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "tessera: error: %s\n", WithFlagNames(status).ToString().c_str());
  return 1;
}

Result<std::vector<int64_t>> ParseIntList(const std::string& text, const std::string& option) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t pos = 0;
      long long v = std::stoll(item, &pos);
      if (pos != item.size()) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      return InvalidArgument(option + " \"" + text + "\" must be a comma-separated list of integers");
    }
  }
  if (out.empty()) return InvalidArgument(option + " is empty");
  return out;
}

Result<std::shared_ptr<Store>> OpenFileStore(const std::string& path, bool create) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<FileStore> store, FileStore::Open(path, create));
  return std::shared_ptr<Store>(std::move(store));
}

void ProgressLine::Update(bool final, const std::function<std::string(double seconds)>& text) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!final && now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  const std::string line = text(std::chrono::duration<double>(now - start_).count());
  std::fprintf(stderr, "\r%s%s", line.c_str(), final ? "\n" : "   ");
}

Result<CFile> CFile::Open(const std::string& path, bool write) {
  if (path == "-") return CFile(write ? stdout : stdin, false, write ? "<stdout>" : "<stdin>");
  FILE* f = std::fopen(path.c_str(), write ? "wb" : "rb");
  if (!f) {
    int err = errno;
    if (err == ENOENT && !write) return NotFound(path + ": " + std::strerror(err));
    return IoError(path + ": " + std::strerror(err));
  }
  return CFile(f, true, path);
}

CFile::~CFile() {
  if (f_ && owned_) std::fclose(f_);
}

Result<size_t> CFile::ReadFully(uint8_t* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    size_t got = std::fread(dst + done, 1, n - done, f_);
    done += got;
    if (got == 0) {
      if (std::ferror(f_)) return IoError("reading " + path_ + ": " + std::strerror(errno));
      break;
    }
  }
  return done;
}

Status CFile::WriteAll(const uint8_t* src, size_t n) {
  if (n && std::fwrite(src, 1, n, f_) != n) return IoError("writing " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

Status CFile::Close() {
  if (!f_) return Status::Ok();
  int rc = owned_ ? std::fclose(f_) : std::fflush(f_);
  f_ = nullptr;
  if (rc != 0) return IoError("closing " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

std::string JsonText(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tessera::cli
