#include "base/error.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace nvhcq {
namespace {

TEST(Error, MessageNamesCallStatusAndHint) {
  Error e("allocation failed", "NV_ESC_RM_ALLOC", 81, "free some GPU memory");
  std::string what = e.what();
  EXPECT_NE(what.find("allocation failed"), std::string::npos);
  EXPECT_NE(what.find("NV_ESC_RM_ALLOC"), std::string::npos);
  EXPECT_NE(what.find("81"), std::string::npos);
  EXPECT_NE(what.find("free some GPU memory"), std::string::npos);
  EXPECT_EQ(e.status(), 81);
  EXPECT_EQ(e.call(), "NV_ESC_RM_ALLOC");
  EXPECT_EQ(e.message(), "allocation failed");
}

TEST(Error, PlainMessageHasNoDecorations) {
  Error e("bad input");
  EXPECT_STREQ(e.what(), "bad input");
}

TEST(Error, SubclassesAreErrors) {
  EXPECT_THROW(throw UsageError("x"), Error);
  EXPECT_THROW(throw OutOfMemoryError("x"), Error);
  EXPECT_THROW(throw GpuFaultError("x"), Error);
  EXPECT_THROW(throw FormatError("x"), Error);
}

TEST(Error, CheckErrnoCarriesErrnoText) {
  errno = ENOENT;
  try {
    check_errno(false, "open /nonexistent", "open");
    FAIL() << "check_errno(false) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos);
  }
  EXPECT_NO_THROW(check_errno(true, "fine", "open"));
}

}  // namespace
}  // namespace nvhcq
