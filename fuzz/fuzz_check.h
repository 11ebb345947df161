// FUZZ_CHECK: an invariant of a fuzz target; on failure prints what broke and aborts, which
// libFuzzer reports as a crash (saving the input).
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                      \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", __FILE__, __LINE__, \
                   #cond, what);                                                    \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
