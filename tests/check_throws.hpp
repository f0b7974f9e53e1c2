// CHECK_THROWS_NAMING: the call throws `Type` and its message matches `matcher` (the call is made
// twice: use it only for calls that throw before changing any state).
#pragma once

#include <catch2/catch.hpp>

#define CHECK_THROWS_NAMING(expr, Type, matcher) \
  do {                                          \
    CHECK_THROWS_AS(expr, Type);                \
    CHECK_THROWS_WITH(expr, matcher);           \
  } while (false)
