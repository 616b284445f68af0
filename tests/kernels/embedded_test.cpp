#include "kernels/embedded.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace nvhcq::kernels {
namespace {

TEST(EmbeddedKernels, SourcesAreEmbeddedWhole) {
  auto text = embedded_source("selftest.cu");
  EXPECT_NE(text.find("affine_fill"), std::string_view::npos);
  EXPECT_NE(text.find("store_to"), std::string_view::npos) << "the last kernel is present";
  EXPECT_EQ(text.back(), '\n');
  EXPECT_FALSE(embedded_source("common.cuh").empty());
}

TEST(EmbeddedKernels, UnknownNameThrows) {
  EXPECT_THROW(embedded_source("nope.cu"), Error);
}

}  // namespace
}  // namespace nvhcq::kernels
