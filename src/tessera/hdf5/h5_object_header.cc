#include "tessera/hdf5/h5_object_header.h"

#include <deque>
#include <set>
#include <utility>

#include "tessera/hdf5/h5_shared_messages.h"

namespace tessera::hdf5 {
namespace {

// No real object has anywhere near this many chunks or messages; more means a corrupt loop.
constexpr size_t kMaxChunks = 4096;
constexpr size_t kMaxMessages = 1 << 16;

struct Chunk {
  uint64_t addr;
  uint64_t len;
};

// Adds a parsed message to the header; a continuation message queues the chunk it points to.
Status KeepMessage(const RawFile& file, HeaderMessage m, ObjectHeader* oh, std::deque<Chunk>* pending, FieldReader& r) {
  if (m.type == kMsgContinuation) {
    FieldReader c(m.body, file, "continuation message", m.addr);
    Chunk next{c.Addr(), c.Length()};
    if (!c.ok()) return c.status();
    pending->push_back(next);
  }
  if (oh->messages.size() >= kMaxMessages) return r.Fail("too many header messages");
  oh->messages.push_back(std::move(m));
  return Status::Ok();
}

// Parses the messages of a v1 header chunk (all of `data`, 8-byte aligned message headers).
Status ParseV1Messages(const RawFile& file, const Chunk& chunk, ByteView data, ObjectHeader* oh,
                       std::deque<Chunk>* pending) {
  FieldReader r(data, file, "object header chunk", chunk.addr);
  while (r.remaining() >= 8) {
    const uint64_t msg_at = chunk.addr + r.pos();
    HeaderMessage m;
    m.type = r.U16();
    const uint16_t size = r.U16();
    m.flags = r.U8();
    r.Skip(3);
    m.addr = msg_at + 8;
    ByteView body = r.Take(size);
    if (!r.ok()) return r.status();
    m.body.assign(body.begin(), body.end());
    // Bodies are padded to 8 bytes in v1 headers (the size field normally includes it).
    r.set_pos(std::min(r.size(), (r.pos() + 7) / 8 * 8));
    TESSERA_RETURN_IF_ERROR(KeepMessage(file, std::move(m), oh, pending, r));
  }
  return Status::Ok();
}

Result<ObjectHeader> ReadV1(const RawFile& file, uint64_t addr) {
  ObjectHeader oh;
  oh.addr = addr;
  oh.version = 1;
  TESSERA_ASSIGN_OR_RETURN(Bytes prefix, file.Read(addr, 16, "object header"));
  FieldReader r(prefix, file, "object header", addr);
  r.U8();
  r.Skip(1);
  r.U16();  // message count (the chunks tell us the same)
  r.U32();  // reference count
  const uint32_t size = r.U32();
  std::deque<Chunk> pending{{addr + 16, size}};
  std::set<uint64_t> seen;
  while (!pending.empty()) {
    Chunk c = pending.front();
    pending.pop_front();
    if (!seen.insert(c.addr).second || seen.size() > kMaxChunks)
      return file.Corrupt("object header chunk", c.addr, c.len, "continuation loop (chunk already read)");
    TESSERA_ASSIGN_OR_RETURN(Bytes data, file.Read(c.addr, c.len, "object header chunk"));
    TESSERA_RETURN_IF_ERROR(ParseV1Messages(file, c, data, &oh, &pending));
  }
  return oh;
}

// Parses v2 messages in data[begin, end) of a chunk.
Status ParseV2Messages(const RawFile& file, const Chunk& chunk, ByteView data, size_t begin, size_t end,
                       bool creation_order, ObjectHeader* oh, std::deque<Chunk>* pending) {
  FieldReader r(data.subspan(0, end), file, "object header chunk", chunk.addr);
  r.set_pos(begin);
  const size_t header_size = creation_order ? 6 : 4;
  while (r.remaining() >= header_size) {  // less is a gap
    const uint64_t msg_at = chunk.addr + r.pos();
    HeaderMessage m;
    m.type = r.U8();
    const uint16_t size = r.U16();
    m.flags = r.U8();
    if (creation_order) r.Skip(2);
    m.addr = msg_at + header_size;
    ByteView body = r.Take(size);
    if (!r.ok()) return r.status();
    m.body.assign(body.begin(), body.end());
    TESSERA_RETURN_IF_ERROR(KeepMessage(file, std::move(m), oh, pending, r));
  }
  return Status::Ok();
}

Result<ObjectHeader> ReadV2(const RawFile& file, uint64_t addr) {
  ObjectHeader oh;
  oh.addr = addr;
  oh.version = 2;
  // Signature, version, flags, optional times (16) and attribute limits (4), chunk-0 size (<= 8).
  const uint64_t prefix_len = std::min<uint64_t>(34, file.size() - std::min(file.size(), file.base() + addr));
  TESSERA_ASSIGN_OR_RETURN(Bytes prefix, file.Read(addr, prefix_len, "object header"));
  FieldReader p(prefix, file, "object header", addr);
  p.ExpectSignature("OHDR");
  const uint8_t version = p.U8();
  const uint8_t flags = p.U8();
  if (!p.ok()) return p.status();
  if (version != 2) return p.Fail("object header version " + std::to_string(version) + " (expected 2)");
  if (flags & 0x20) p.Skip(16);  // access / modification / change / birth times
  if (flags & 0x10) p.Skip(4);   // max compact / min dense attribute counts
  const uint64_t chunk0 = p.U(size_t{1} << (flags & 3));
  if (!p.ok()) return p.status();
  const bool creation_order = flags & 0x04;
  const uint64_t messages_begin = p.pos();
  if (chunk0 > file.size()) return p.Fail("chunk 0 size " + std::to_string(chunk0) + " exceeds the file size");
  TESSERA_ASSIGN_OR_RETURN(Bytes data, file.Read(addr, messages_begin + chunk0 + 4, "object header"));
  FieldReader whole(data, file, "object header", addr);
  whole.set_pos(messages_begin + chunk0);
  if (!whole.VerifyChecksum()) return whole.status();
  std::deque<Chunk> pending;
  std::set<uint64_t> seen{addr};
  TESSERA_RETURN_IF_ERROR(ParseV2Messages(file, Chunk{addr, data.size()}, data, messages_begin,
                                          messages_begin + chunk0, creation_order, &oh, &pending));
  while (!pending.empty()) {
    Chunk c = pending.front();
    pending.pop_front();
    if (!seen.insert(c.addr).second || seen.size() > kMaxChunks)
      return file.Corrupt("object header continuation", c.addr, c.len, "continuation loop (chunk already read)");
    TESSERA_ASSIGN_OR_RETURN(Bytes block, file.Read(c.addr, c.len, "object header continuation"));
    FieldReader cr(block, file, "object header continuation", c.addr);
    cr.ExpectSignature("OCHK");
    if (block.size() < 8) (void)cr.Fail("shorter than its signature and checksum");
    if (!cr.ok()) return cr.status();
    cr.set_pos(block.size() - 4);
    if (!cr.VerifyChecksum()) return cr.status();
    TESSERA_RETURN_IF_ERROR(ParseV2Messages(file, c, block, 4, block.size() - 4, creation_order, &oh, &pending));
  }
  return oh;
}

}  // namespace

const HeaderMessage* ObjectHeader::Find(uint16_t type) const {
  for (const HeaderMessage& m : messages)
    if (m.type == type) return &m;
  return nullptr;
}

namespace {

// Message flag bit 7: a reader that does not understand the message must not open the object.
constexpr uint8_t kFailIfUnknownAlways = 0x80;
// Whether tessera may open an object carrying a message of `type` flagged "fail if unknown": it
// interprets the message, or the message says nothing about the object's values (times, comments,
// reference counts, B-tree tuning), so ignoring it cannot change what is read. Everything else is
// unknown, as it is to an HDF5 library that lacks it: type 0x0009, the specification's "bogus" test
// message (which the library itself knows only when built with H5O_ENABLE_BOGUS), and any type
// after 0x0018.
bool KnownMessageType(uint16_t type) {
  switch (type) {
    case kMsgNil:
    case kMsgDataspace:
    case kMsgLinkInfo:
    case kMsgDatatype:
    case kMsgFillValueOld:
    case kMsgFillValue:
    case kMsgLink:
    case kMsgExternalFiles:  // refused by the dataset reader where it is not followed
    case kMsgLayout:
    case 0x000A:             // group info: link storage hints for writers
    case kMsgFilterPipeline:
    case 0x000C:             // attribute
    case 0x000D:             // object comment
    case 0x000E:             // modification time (old)
    case 0x000F:             // shared message table (superblock extension)
    case kMsgContinuation:
    case kMsgSymbolTable:
    case 0x0012:             // modification time
    case 0x0013:             // B-tree 'K' values
    case 0x0014:             // driver info
    case 0x0015:             // attribute info
    case 0x0016:             // object reference count
    case 0x0017:             // file space info
    case kMsgMetadataCacheImage:
      return true;
    default:
      return false;
  }
}

// The HDF5 library refuses an object carrying a message it does not know that is flagged "fail if
// unknown"; so does tessera, naming the message.
Status CheckUnknownMessages(const RawFile& file, const ObjectHeader& oh) {
  for (const HeaderMessage& m : oh.messages)
    if (!KnownMessageType(m.type) && (m.flags & kFailIfUnknownAlways) != 0)
      return Unsupported(file.Where("object header message", m.addr, m.body.size()) + ": message type " +
                         std::to_string(m.type) + " is flagged 'fail if unknown' and tessera does not know it; " +
                         "the object cannot be opened");
  return Status::Ok();
}

Result<ObjectHeader> ReadAnyObjectHeader(const RawFile& file, uint64_t addr) {
  TESSERA_ASSIGN_OR_RETURN(Bytes first, file.Read(addr, 4, "object header"));
  if (first[0] == 'O' && first[1] == 'H' && first[2] == 'D' && first[3] == 'R') return ReadV2(file, addr);
  if (first[0] == 1) return ReadV1(file, addr);
  FieldReader r(first, file, "object header", addr);
  return r.Fail("bad signature (neither \"OHDR\" nor a version 1 header)");
}

// Replaces each message kept in the shared-message heap by the message itself, so that every
// reader of the header (datasets, `tessera info`) sees ordinary messages. Attribute messages are
// left to the attribute reader, which resolves them one by one: an attribute whose heap object
// cannot be read is shown as unreadable instead of hiding its object.
Status ResolveSharedHeapMessages(const RawFile& file, ObjectHeader* oh) {
  for (HeaderMessage& m : oh->messages) {
    if (!IsInSharedHeap(m) || m.type == kMsgAttribute) continue;
    TESSERA_ASSIGN_OR_RETURN(m, ResolveSharedHeapMessage(file, m));
  }
  return Status::Ok();
}

}  // namespace

Result<ObjectHeader> ReadObjectHeader(const RawFile& file, uint64_t addr) {
  TESSERA_ASSIGN_OR_RETURN(ObjectHeader oh, ReadAnyObjectHeader(file, addr));
  TESSERA_RETURN_IF_ERROR(CheckUnknownMessages(file, oh));
  TESSERA_RETURN_IF_ERROR(ResolveSharedHeapMessages(file, &oh));
  return oh;
}

}  // namespace tessera::hdf5
