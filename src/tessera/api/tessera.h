// The tessera library: include this one header.
//
//   OpenArray(location)           -> Array   (shape, dtype, chunks, metadata, Read(hyperslab))
//   CreateStream(location, spec)  -> Stream  (Append, Flush, Close, Abort, stats)
//   ArraySpecFromJson(json)       -> ArraySpec (the spec's JSON form; ArraySpecToJson back)
//
// Every fallible call returns Status or Result<T> with a kind (core/status.h).
#pragma once

#include "tessera/api/array.h"
#include "tessera/api/create_array.h"
#include "tessera/spec/array_spec.h"
#include "tessera/spec/array_spec_json.h"
#include "tessera/api/convert.h"
#include "tessera/api/driver_registry.h"
#include "tessera/store/location.h"
#include "tessera/api/shared_write.h"
#include "tessera/api/stream.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/read/selection_read.h"
