#include "base/dynlib.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace nvhcq {
namespace {

TEST(DynLib, MissingLibraryErrorNamesWhatAndWhere) {
  try {
    DynLib::open("the frobnicator", {"libfrobnicate_nvhcq_test.so.7"}, {"/tmp", "/usr/lib"});
    FAIL() << "opened a library that does not exist";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("the frobnicator"), std::string::npos);
    EXPECT_NE(what.find("libfrobnicate_nvhcq_test.so.7"), std::string::npos);
    EXPECT_NE(what.find("/tmp"), std::string::npos);
    EXPECT_NE(what.find("loader path"), std::string::npos);
  }
}

TEST(DynLib, LoadsFromLoaderPathAndFindsSymbols) {
  DynLib libm = DynLib::open("libm", {"libm.so.6"}, {});
  ASSERT_TRUE(libm.loaded());
  double (*cos_fn)(double) = nullptr;
  libm.bind(cos_fn, "cos");
  ASSERT_NE(cos_fn, nullptr);
  EXPECT_DOUBLE_EQ(cos_fn(0.0), 1.0);
  EXPECT_EQ(libm.symbol("no_such_symbol_nvhcq", false), nullptr);
  EXPECT_THROW(libm.symbol("no_such_symbol_nvhcq"), Error);
}

TEST(DynLib, CudaFoldersIncludeCudaHome) {
  setenv("CUDA_HOME", "/opt/my-cuda", 1);
  auto dirs = cuda_library_dirs();
  unsetenv("CUDA_HOME");
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.front(), "/opt/my-cuda/lib64");
}

}  // namespace
}  // namespace nvhcq
