#include "llm/ggml_type.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

TEST(GgmlType, BlockGeometryMatchesGgml) {
  EXPECT_EQ(traits(GgmlType::Q4_0).block_bytes, 18u);
  EXPECT_EQ(traits(GgmlType::Q8_0).block_bytes, 34u);
  EXPECT_EQ(traits(GgmlType::Q4_K).block_bytes, 144u);
  EXPECT_EQ(traits(GgmlType::Q6_K).block_bytes, 210u);
  EXPECT_EQ(traits(GgmlType::Q6_K).block_elements, 256u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::Q4_K, 4096), 16u * 144u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::F16, 7), 14u);
}

TEST(GgmlType, UnknownIdsAndPartialBlocksAreRejected) {
  EXPECT_FALSE(ggml_type_traits(4).has_value()) << "4 and 5 were removed from ggml";
  EXPECT_FALSE(ggml_type_traits(9999).has_value());
  EXPECT_THROW(ggml_row_bytes(GgmlType::Q4_0, 33), FormatError);
  EXPECT_THROW(ggml_row_bytes(GgmlType::F32, UINT64_MAX / 2), FormatError);
}

TEST(GgmlType, NamesRoundTrip) {
  EXPECT_EQ(ggml_type_from_name("q4_k"), GgmlType::Q4_K);
  EXPECT_EQ(ggml_type_from_name("Q6_K"), GgmlType::Q6_K);
  EXPECT_FALSE(ggml_type_from_name("q9_z").has_value());
}

}  // namespace
}  // namespace nvhcq::llm
