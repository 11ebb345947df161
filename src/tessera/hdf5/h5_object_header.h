// Object headers (version 1, and version 2 "OHDR" with "OCHK" continuation chunks): the list of
// header messages that describe a group or dataset.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/hdf5/h5_raw_file.h"

namespace tessera::hdf5 {

// Header message types tessera looks at.
inline constexpr uint16_t kMsgNil = 0x0000;
inline constexpr uint16_t kMsgDataspace = 0x0001;
inline constexpr uint16_t kMsgLinkInfo = 0x0002;
inline constexpr uint16_t kMsgDatatype = 0x0003;
inline constexpr uint16_t kMsgFillValueOld = 0x0004;
inline constexpr uint16_t kMsgMetadataCacheImage = 0x0018;
inline constexpr uint16_t kMsgFillValue = 0x0005;
inline constexpr uint16_t kMsgLink = 0x0006;
inline constexpr uint16_t kMsgExternalFiles = 0x0007;
inline constexpr uint16_t kMsgLayout = 0x0008;
inline constexpr uint16_t kMsgFilterPipeline = 0x000B;
inline constexpr uint16_t kMsgAttribute = 0x000C;
inline constexpr uint16_t kMsgContinuation = 0x0010;
inline constexpr uint16_t kMsgSymbolTable = 0x0011;

// Message flag bit 1: the message body lives in the shared-message heap or another header.
inline constexpr uint8_t kMsgFlagShared = 0x02;

struct HeaderMessage {
  uint16_t type = 0;
  uint8_t flags = 0;
  uint64_t addr = 0;  // where the body starts (for error messages)
  Bytes body;
};

struct ObjectHeader {
  uint64_t addr = 0;
  int version = 0;
  std::vector<HeaderMessage> messages;

  // The first message of `type`, or nullptr.
  const HeaderMessage* Find(uint16_t type) const;
};

// Reads the header at `addr` with all its continuation chunks (bounded in number; a chunk seen
// twice is corrupt), verifying v2 checksums.
Result<ObjectHeader> ReadObjectHeader(const RawFile& file, uint64_t addr);

}  // namespace tessera::hdf5
