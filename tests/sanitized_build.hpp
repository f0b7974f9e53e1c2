// Whether this test executable is the ASan + UBSan build's (tests/meson.build defines
// DPSTREAM_SANITIZED_BUILD there). That build is for memory errors and undefined behaviour and runs the
// library ~15x slower; the few statistical regressions that run fewer cells in it say so where they do,
// and keep their seeds and tolerances.
#pragma once

#ifndef DPSTREAM_SANITIZED_BUILD
#define DPSTREAM_SANITIZED_BUILD 0
#endif

namespace dpstream::testing {

inline constexpr bool kSanitizedBuild = DPSTREAM_SANITIZED_BUILD != 0;

}  // namespace dpstream::testing
