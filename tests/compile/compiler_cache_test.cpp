// compile::compile and its on-disk cache: a second compile of the same source,
// architecture and options comes from the cache with the same bytes; anything
// in the key that changes compiles again; a corrupt entry is ignored and
// replaced; NVRTC's errors carry its log and a hint for a missing header; the
// cache can be turned off; NVHCQ_KERNEL_DEFINES reaches the compiler and the key.

#include "compile/compiler.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "compile/nvrtc_api.h"

namespace nvhcq::compile {
namespace {

namespace fs = std::filesystem;

#define REQUIRE_NVRTC() \
  if (!nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed here"

// A private cache folder for one test, removed afterwards; restores the
// environment it changes.
class CompilerCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "nvhcq-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ::setenv("NVHCQ_CACHE_DIR", dir_.c_str(), 1);
    ::unsetenv("NVHCQ_CACHE");
  }
  void TearDown() override {
    ::unsetenv("NVHCQ_CACHE_DIR");
    ::unsetenv("NVHCQ_CACHE");
    ::unsetenv("NVHCQ_KERNEL_DEFINES");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  size_t entries() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) n += e.path().extension() == ".cubin" ? 1 : 0;
    return n;
  }
  fs::path only_entry() const {
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().extension() == ".cubin") return e.path();
    }
    return {};
  }

  std::string dir_;
  // A unique kernel per test, so no other process's cache entry can answer.
  std::string source_ = std::string("extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= ") +
                        std::to_string(::getpid()) + ".0f; }\n";
};

TEST_F(CompilerCache, SecondCompileComesFromTheCacheWithTheSameBytes) {
  REQUIRE_NVRTC();
  CompileOptions o;
  o.arch = "sm_90";
  const CompiledModule first = compile(source_, "k.cu", o);
  EXPECT_FALSE(first.from_cache);
  EXPECT_EQ(entries(), 1u);
  const CompiledModule second = compile(source_, "k.cu", o);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(CompilerCache, ArchitectureOptionsAndSourceAreInTheKey) {
  REQUIRE_NVRTC();
  CompileOptions o;
  o.arch = "sm_90";
  compile(source_, "k.cu", o);
  CompileOptions other_arch = o;
  other_arch.arch = "sm_87";
  EXPECT_FALSE(compile(source_, "k.cu", other_arch).from_cache);
  CompileOptions defined = o;
  defined.defines.push_back("NVHCQ_TEST_DEFINE=1");
  EXPECT_FALSE(compile(source_, "k.cu", defined).from_cache);
  EXPECT_FALSE(compile(source_ + "// changed\n", "k.cu", o).from_cache);
  EXPECT_EQ(entries(), 4u);
  EXPECT_TRUE(compile(source_, "k.cu", o).from_cache);
}

TEST_F(CompilerCache, CorruptEntryIsRecompiledAndReplaced) {
  REQUIRE_NVRTC();
  CompileOptions o;
  o.arch = "sm_90";
  const CompiledModule good = compile(source_, "k.cu", o);
  const fs::path entry = only_entry();
  ASSERT_FALSE(entry.empty());
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << "not an ELF file at all, just bytes";
  const CompiledModule again = compile(source_, "k.cu", o);
  EXPECT_FALSE(again.from_cache) << "a corrupt entry must not be used";
  EXPECT_EQ(again.cubin, good.cubin);
  EXPECT_TRUE(compile(source_, "k.cu", o).from_cache) << "the entry is written again";
}

TEST_F(CompilerCache, CacheOffWritesNothing) {
  REQUIRE_NVRTC();
  ::setenv("NVHCQ_CACHE", "0", 1);
  CompileOptions o;
  o.arch = "sm_90";
  EXPECT_FALSE(compile(source_, "k.cu", o).from_cache);
  EXPECT_FALSE(compile(source_, "k.cu", o).from_cache);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(CompilerCache, ErrorsCarryTheLogAndAHintForMissingHeaders) {
  REQUIRE_NVRTC();
  CompileOptions o;
  o.arch = "sm_90";
  try {
    compile("extern \"C\" __global__ void k() { undeclared_thing(); }\n", "bad.cu", o);
    FAIL() << "a kernel that does not compile must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared_thing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.cu"), std::string::npos) << e.what();
  }
  try {
    compile("#include \"no_such_header_anywhere.cuh\"\nextern \"C\" __global__ void k() {}\n", "inc.cu", o);
    FAIL() << "a missing header must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("neither embedded nor in"), std::string::npos) << e.what();
  }
  EXPECT_EQ(entries(), 0u) << "failed compiles leave no cache entries";
}

TEST_F(CompilerCache, KernelDefinesFromTheEnvironmentReachTheCompilerAndTheKey) {
  REQUIRE_NVRTC();
  // The source compiles only with both tuning constants defined as given.
  const std::string src = source_ +
                          "#if !defined(TUNE_A) || TUNE_B != 3\n"
                          "#error tuning constants missing\n"
                          "#endif\n";
  CompileOptions o;
  o.arch = "sm_90";
  EXPECT_THROW(compile(src, "k.cu", o), Error);
  ::setenv("NVHCQ_KERNEL_DEFINES", " TUNE_A  TUNE_B=3 ", 1);
  const CompiledModule tuned = compile(src, "k.cu", o);
  EXPECT_FALSE(tuned.from_cache);
  EXPECT_TRUE(compile(src, "k.cu", o).from_cache);
  // Another value is another cache entry, and here a compile error.
  ::setenv("NVHCQ_KERNEL_DEFINES", "TUNE_A TUNE_B=4", 1);
  EXPECT_THROW(compile(src, "k.cu", o), Error);
}

}  // namespace
}  // namespace nvhcq::compile
