#include "tessera/hdf5/h5_superblock.h"

#include <cstring>

namespace tessera::hdf5 {

Result<std::optional<uint64_t>> FindSignature(const RawFile& file) {
  for (uint64_t offset = 0; offset + 8 <= file.size(); offset = offset == 0 ? 512 : offset * 2) {
    uint8_t sig[8];
    TESSERA_RETURN_IF_ERROR(file.ReadAbsolute(offset, 8, sig, "signature"));
    if (std::memcmp(sig, kHdf5Signature, 8) == 0) return std::optional<uint64_t>(offset);
  }
  return std::optional<uint64_t>();
}

Result<Superblock> ReadSuperblock(RawFile* file) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> found, FindSignature(*file));
  if (!found) return InvalidArgument(file->path() + ": not an HDF5 file (no HDF5 signature at offset 0, 512, 1024, ...)");
  Superblock sb;
  sb.signature_offset = *found;
  // The largest superblock tessera reads (v1 with a root symbol table entry) is 136 bytes.
  const uint64_t len = std::min<uint64_t>(136, file->size() - sb.signature_offset);
  Bytes buf(static_cast<size_t>(len));
  TESSERA_RETURN_IF_ERROR(file->ReadAbsolute(sb.signature_offset, len, buf.data(), "superblock"));
  // Errors name the superblock's own extent: 96 / 100 bytes (v0 / v1, root entry included) or
  // 48 bytes (v2 / v3).
  const uint8_t version_byte = buf.size() > 8 ? buf[8] : 0;
  const size_t extent = version_byte == 0 ? 96 : version_byte == 1 ? 100 : 48;
  FieldReader r(ByteView(buf).first(std::min<size_t>(extent, buf.size())), *file, "superblock", sb.signature_offset);
  r.Skip(8);
  sb.version = r.U8();
  if (!r.ok()) return r.status();
  uint8_t size_of_offsets = 0, size_of_lengths = 0;
  if (sb.version == 0 || sb.version == 1) {
    r.Skip(4);  // free-space, root group symbol table entry, reserved, shared header versions
    size_of_offsets = r.U8();
    size_of_lengths = r.U8();
    r.Skip(1);
    r.Skip(4);  // group leaf / internal node K
    r.Skip(4);  // file consistency flags
    if (sb.version == 1) r.Skip(4);  // indexed storage internal node K, reserved
  } else if (sb.version == 2 || sb.version == 3) {
    size_of_offsets = r.U8();
    size_of_lengths = r.U8();
    r.Skip(1);  // file consistency flags
  } else {
    return Unsupported(file->Where("superblock", sb.signature_offset, r.size()) + ": superblock version " +
                       std::to_string(sb.version) + " (tessera reads versions 0-3)");
  }
  if (!r.ok()) return r.status();
  if (size_of_offsets != 8 || size_of_lengths != 8)
    return Unsupported(file->Where("superblock", sb.signature_offset, r.size()) + ": size of offsets " +
                       std::to_string(size_of_offsets) + " and lengths " + std::to_string(size_of_lengths) +
                       " (tessera reads files with 8-byte offsets and lengths)");
  sb.base_address = r.Addr();
  if (sb.version <= 1) {
    r.Addr();  // free-space info (unused by readers)
    sb.end_of_file = r.Addr();
    r.Addr();  // driver information block
    r.Addr();  // root symbol table entry: link name offset
    sb.root_object_header = r.Addr();
    r.Skip(4 + 4 + 16);  // cache type, reserved, scratch pad
    if (!r.ok()) return r.status();
  } else {
    sb.extension = r.Addr();  // file-wide settings; checked by Hdf5File::Open for what tessera cannot read
    sb.end_of_file = r.Addr();
    sb.root_object_header = r.Addr();
    if (!r.VerifyChecksum()) return r.status();
  }
  // The HDF5 library trusts the signature's position over a stale base address (a user block
  // added after the fact); so does tessera.
  if (sb.base_address != sb.signature_offset) sb.base_address = sb.signature_offset;
  file->set_base(sb.base_address);
  // The library records the end of file counting the user block too (h5py files with a user block
  // store the file size here), so it is compared with the file size as is.
  if (sb.end_of_file != kUndefinedAddress && sb.end_of_file > file->size())
    return CorruptData(file->path() + ": file truncated: the superblock records end of file at " +
                       Hex(sb.end_of_file) + " but the file has " + std::to_string(file->size()) + " bytes");
  if (sb.root_object_header == kUndefinedAddress)
    return CorruptData(file->Where("superblock", sb.signature_offset, r.size()) + ": no root group");
  return sb;
}

}  // namespace tessera::hdf5
