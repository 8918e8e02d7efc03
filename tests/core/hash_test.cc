#include "zerograph/core/hash.h"

#include <gtest/gtest.h>

namespace zerograph {
namespace {

// FNV-1a's published values: the empty input is the basis, "a" is af63dc4c8601ec8c.
TEST(HashTest, MatchesReferenceValues) {
  EXPECT_EQ(Fnv1a64Text(Fnv1a64("")), "fnv1a64:cbf29ce484222325");
  EXPECT_EQ(Fnv1a64Text(Fnv1a64("a")), "fnv1a64:af63dc4c8601ec8c");
}

// Hashing in parts gives the hash of the whole.
TEST(HashTest, ContinuesOverParts) {
  EXPECT_EQ(Fnv1a64("}", Fnv1a64("{\"a\":1")), Fnv1a64("{\"a\":1}"));
}

}  // namespace
}  // namespace zerograph
