#!/usr/bin/env bash
# Prints each test that the last ctest run in build directory $1 skipped, with the reason the test
# gave (GTEST_SKIP() << reason), so that a skip is never only a count.
set -euo pipefail
log="$1/Testing/Temporary/LastTest.log"
[[ -f "$log" ]] || exit 0
awk '/^[0-9]+\/[0-9]+ Test: / { name = $3 }
     /: Skipped$/ { getline reason; n++; printf "SKIPPED %s: %s\n", name, reason }
     END { printf "ctest: %d skipped\n", n }' "$log"
