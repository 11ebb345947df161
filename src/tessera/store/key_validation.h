// Checks every store applies identically, so that a key or a byte range accepted by one store
// is accepted by all of them and errors read the same.
//
// A valid key is a non-empty sequence of '/'-separated segments where no segment is empty, "."
// or "..", and no character is NUL. So "a/b", ".zattrs" and "a..b" are valid; "", "/a", "a/",
// "a//b", "a/./b", "../a" and "a/.." are not. This keeps every key a plain relative path that
// cannot escape a file store's root or alias another key.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/core/status.h"

namespace tessera {

// OK, or kInvalidArgument naming the key and the rule it breaks.
Status ValidateStoreKey(const std::string& key);

// A List() prefix is a plain string prefix, so it may end inside a segment ("c/1" matches
// "c/1/0" and "c/10"). It is valid when it is empty, or when it does not start with '/', has no
// NUL and every complete segment (one followed by '/') is valid as a key segment.
Status ValidateStoreKeyPrefix(const std::string& prefix);

// OK when [offset, offset + length) lies within a value of `size` bytes; otherwise kOutOfRange
// naming `where` (a store's Describe(key)), the requested range and the value's size.
Status CheckByteRange(const std::string& where, uint64_t offset, uint64_t length, uint64_t size);

// OK when a value of `size` bytes has at least `length` bytes; otherwise kOutOfRange naming
// `where`, the request and the value's size.
Status CheckSuffixLength(const std::string& where, uint64_t length, uint64_t size);

}  // namespace tessera
