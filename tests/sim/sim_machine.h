#pragma once
// A simulated machine behind the syscall seam (drv::Sys): the device nodes of a
// Jetson (/dev/nvgpu/igpu0/ctrl, /dev/nvmap) and of a desktop RM GPU
// (/dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm), the files drivers read, and
// one GPU engine thread running both GPUs' channels. Everything else (other
// files, anonymous mmap, munmap) goes to the real kernel.
//
// One machine serves the whole test process (nvhcq's RM client is a process
// singleton holding fds, as a real process would); tests switch front ends on
// and off, set knobs and read counters between devices.

#include <sys/types.h>

#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drv/sys.h"
#include "sim/sim_engine.h"
#include "sim/sim_log.h"

namespace nvhcq::sim {

// What a file descriptor of the simulated kernel refers to.
class SimFile : public std::enable_shared_from_this<SimFile> {
 public:
  virtual ~SimFile() = default;
  // 0 on success, -errno on failure (the machine sets errno).
  virtual int ioctl(unsigned long request, void* arg) = 0;
  // MAP_FAILED with *err set on failure.
  virtual void* mmap(void* addr, size_t length, int prot, int flags, off_t offset, int* err) {
    *err = ENODEV;
    return reinterpret_cast<void*>(-1);
  }
  const std::string& path() const { return path_; }
  void set_path(std::string p) { path_ = std::move(p); }

 private:
  std::string path_;
};

// A simulated driver: the device nodes it owns and the files it serves.
class FrontEnd {
 public:
  virtual ~FrontEnd() = default;
  // Device node paths, e.g. "/dev/nvmap".
  virtual std::vector<std::string> nodes() const = 0;
  // Opens one of its nodes; nullptr with *err set when refused.
  virtual std::shared_ptr<SimFile> open(const std::string& path, int* err) = 0;
  // Plain files it provides (/proc/driver/nvidia/version, /etc/nv_tegra_release).
  virtual std::map<std::string, std::string> files() const { return {}; }
};

class RmFrontEnd;
class TegraFrontEnd;

class SimMachine final : public drv::Sys {
 public:
  SimMachine();
  ~SimMachine() override;

  // drv::Sys
  int open(const char* path, int flags) override;
  int close(int fd) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override;
  int munmap(void* addr, size_t length) override;
  bool read_file(const std::string& path, std::string* out) override;
  bool exists(const std::string& path) override;
  std::vector<std::string> list_dir(const std::string& path) override;

  // The file behind a simulated fd (nullptr for a real or unknown fd).
  std::shared_ptr<SimFile> file(int fd) const;
  // Adds an fd for a file the kernel creates (an AS, TSG, channel or dma-buf fd).
  int install(std::shared_ptr<SimFile> file, const std::string& path);

  // Front ends present on the machine (both by default).
  void set_present(bool rm, bool tegra);
  bool rm_present() const { return rm_present_; }
  bool tegra_present() const { return tegra_present_; }

  RmFrontEnd& rm() { return *rm_; }
  TegraFrontEnd& tegra() { return *tegra_; }
  SimEngine& engine() { return *engine_; }
  KernelLog& log() { return log_; }
  SimStats& stats() { return stats_; }
  SimOptions& options() { return options_; }
  size_t open_fds() const;

 private:
  // The paths the simulator owns outright: a real GPU's nodes stay hidden.
  static bool simulated_path(const std::string& path);
  FrontEnd* owner(const std::string& path) const;

  KernelLog log_;
  SimStats stats_;
  SimOptions options_;
  std::unique_ptr<SimEngine> engine_;
  std::unique_ptr<RmFrontEnd> rm_;
  std::unique_ptr<TegraFrontEnd> tegra_;
  bool rm_present_ = true, tegra_present_ = true;
  mutable std::mutex mutex_;
  std::map<int, std::shared_ptr<SimFile>> fds_;
  int next_fd_ = 50000;
};

// The process's simulated machine (made on first use, never destroyed: its GPU
// thread may outlive static destructors).
SimMachine& machine();

}  // namespace nvhcq::sim
