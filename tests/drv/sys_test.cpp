#include "drv/sys.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>

#include "base/error.h"
#include "drv/probe.h"

namespace nvhcq::drv {
namespace {

// A kernel with a fixed set of files: enough to prove the seam is used.
class FakeSys : public Sys {
 public:
  std::map<std::string, std::string> files;
  int opens = 0, closes = 0, ioctls = 0;
  int open(const char* path, int) override {
    ++opens;
    if (!files.count(path)) {
      errno = ENOENT;
      return -1;
    }
    return 100 + opens;
  }
  int close(int) override { return ++closes, 0; }
  int ioctl(int, unsigned long request, void* arg) override {
    ++ioctls;
    *static_cast<unsigned long*>(arg) = request * 2;
    return 0;
  }
  void* mmap(void*, size_t, int, int, int, off_t) override { return reinterpret_cast<void*>(-1); }
  int munmap(void*, size_t) override { return 0; }
  bool read_file(const std::string& path, std::string* out) override {
    auto it = files.find(path);
    if (it == files.end()) return false;
    *out = it->second;
    return true;
  }
  bool exists(const std::string& path) override { return files.count(path) != 0; }
  std::vector<std::string> list_dir(const std::string& path) override {
    std::vector<std::string> out;
    for (const auto& [p, _] : files) {
      if (p.rfind(path + "/", 0) == 0) out.push_back(p.substr(path.size() + 1));
    }
    return out;
  }
};

TEST(Sys, ScopedOverrideRoutesCallsAndRestores) {
  FakeSys fake;
  fake.files["/dev/nvidiactl"] = "";
  {
    ScopedSys scope(&fake);
    EXPECT_EQ(&sys(), &fake);
    unsigned long value = 0;
    EXPECT_EQ(sys().ioctl(3, 21, &value), 0);
    EXPECT_EQ(value, 42u);
    Fd fd = open_or_throw("/dev/nvidiactl", 0);
    EXPECT_TRUE(fd.valid());
  }
  EXPECT_EQ(fake.closes, 1) << "Fd closes through the seam it was opened on";
  EXPECT_EQ(&sys(), &real_sys());
}

TEST(Sys, OpenFailureNamesPathAndErrno) {
  FakeSys fake;
  ScopedSys scope(&fake);
  try {
    open_or_throw("/dev/nvidia7", 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/nvidia7"), std::string::npos);
    EXPECT_EQ(e.status(), ENOENT);
  }
}

TEST(Probe, FindsRmAndTegraNodesThroughTheSeam) {
  FakeSys fake;
  fake.files["/dev/nvidiactl"] = "";
  fake.files["/dev/nvidia-uvm"] = "";
  fake.files["/dev/nvidia0"] = "";
  fake.files["/dev/nvidia1"] = "";
  fake.files["/dev/nvidia-modeset"] = "";
  fake.files["/proc/driver/nvidia/version"] = "NVRM version: NVIDIA UNIX Open Kernel Module 580.159.04\nGCC\n";
  ScopedSys scope(&fake);
  auto n = probe_driver_nodes();
  EXPECT_TRUE(n.has_rm());
  EXPECT_FALSE(n.has_tegra());
  ASSERT_EQ(n.rm_gpus.size(), 2u) << "nvidia-modeset and nvidia-uvm are not GPUs";
  EXPECT_EQ(n.rm_gpus[0], "/dev/nvidia0");
  EXPECT_NE(n.rm_version.find("580.159.04"), std::string::npos);
  EXPECT_EQ(n.rm_version.find('\n'), std::string::npos);
}

TEST(Probe, EmptyMachineHasNoGpu) {
  FakeSys fake;
  ScopedSys scope(&fake);
  auto n = probe_driver_nodes();
  EXPECT_FALSE(n.has_any_gpu());
}

}  // namespace
}  // namespace nvhcq::drv
