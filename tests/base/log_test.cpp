#include "base/log.h"

#include <gtest/gtest.h>

namespace nvhcq::log {
namespace {

TEST(Log, ParsesEveryLevelName) {
  Level l = Level::kError;
  ASSERT_TRUE(parse_level("trace", &l));
  EXPECT_EQ(l, Level::kTrace);
  ASSERT_TRUE(parse_level("error", &l));
  EXPECT_EQ(l, Level::kError);
  ASSERT_TRUE(parse_level("info", &l));
  EXPECT_EQ(l, Level::kInfo);
  EXPECT_FALSE(parse_level("loud", &l));
  EXPECT_EQ(l, Level::kInfo) << "a failed parse must not change the output";
}

TEST(Log, LevelGatesMessages) {
  Level saved = level();
  set_level(Level::kWarn);
  EXPECT_TRUE(enabled(Level::kError));
  EXPECT_TRUE(enabled(Level::kWarn));
  EXPECT_FALSE(enabled(Level::kInfo));
  set_level(Level::kTrace);
  EXPECT_TRUE(enabled(Level::kTrace));
  ::testing::internal::CaptureStderr();
  info("value=", 42, " name=", "x");
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("value=42 name=x"), std::string::npos);
  set_level(Level::kError);
  ::testing::internal::CaptureStderr();
  info("hidden");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  set_level(saved);
}

}  // namespace
}  // namespace nvhcq::log
