#include "sim/sim_machine.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

#include "sim/sim_rm.h"
#include "sim/sim_tegra.h"

namespace nvhcq::sim {

SimMachine::SimMachine()
    : engine_(std::make_unique<SimEngine>(&log_, &stats_, &options_)),
      rm_(std::make_unique<RmFrontEnd>(*this)),
      tegra_(std::make_unique<TegraFrontEnd>(*this)) {}

SimMachine::~SimMachine() = default;

SimMachine& machine() {
  static SimMachine* m = new SimMachine();
  return *m;
}

bool SimMachine::simulated_path(const std::string& path) {
  for (const char* prefix : {"/dev/nvidia", "/dev/nvgpu", "/dev/nvmap", "/proc/driver/nvidia"}) {
    if (path.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

FrontEnd* SimMachine::owner(const std::string& path) const {
  if (rm_present_) {
    for (const auto& n : rm_->nodes()) {
      if (n == path) return rm_.get();
    }
  }
  if (tegra_present_) {
    for (const auto& n : tegra_->nodes()) {
      if (n == path) return tegra_.get();
    }
  }
  return nullptr;
}

void SimMachine::set_present(bool rm, bool tegra) {
  rm_present_ = rm;
  tegra_present_ = tegra;
}

int SimMachine::install(std::shared_ptr<SimFile> f, const std::string& path) {
  f->set_path(path);
  std::lock_guard<std::mutex> lock(mutex_);
  int fd = next_fd_++;
  fds_[fd] = std::move(f);
  return fd;
}

std::shared_ptr<SimFile> SimMachine::file(int fd) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : it->second;
}

size_t SimMachine::open_fds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fds_.size();
}

int SimMachine::open(const char* path, int flags) {
  std::string p = path;
  if (FrontEnd* fe = owner(p)) {
    int err = 0;
    auto f = fe->open(p, &err);
    if (!f) {
      errno = err != 0 ? err : ENXIO;
      return -1;
    }
    return install(std::move(f), p);
  }
  if (simulated_path(p)) {
    errno = ENOENT;
    return -1;
  }
  return drv::real_sys().open(path, flags);
}

int SimMachine::close(int fd) {
  std::shared_ptr<SimFile> f;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = fds_.find(fd);
    if (it == fds_.end()) {
      if (fd >= 50000) {
        errno = EBADF;
        return -1;
      }
      return drv::real_sys().close(fd);
    }
    f = std::move(it->second);
    fds_.erase(it);
  }
  f.reset();  // the file's destructor is the kernel's release()
  return 0;
}

int SimMachine::ioctl(int fd, unsigned long request, void* arg) {
  auto f = file(fd);
  if (!f) {
    if (fd >= 50000) {
      errno = EBADF;
      return -1;
    }
    return drv::real_sys().ioctl(fd, request, arg);
  }
  int rc = f->ioctl(request, arg);
  if (rc < 0) {
    errno = -rc;
    return -1;
  }
  return 0;
}

void* SimMachine::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (fd < 0 || (flags & MAP_ANONYMOUS) != 0) {
    return drv::real_sys().mmap(addr, length, prot, flags, fd, offset);
  }
  auto f = file(fd);
  if (!f) {
    if (fd >= 50000) {
      errno = EBADF;
      return MAP_FAILED;
    }
    return drv::real_sys().mmap(addr, length, prot, flags, fd, offset);
  }
  int err = 0;
  void* p = f->mmap(addr, length, prot, flags, offset, &err);
  if (p == MAP_FAILED) errno = err;
  return p;
}

int SimMachine::munmap(void* addr, size_t length) {
  return drv::real_sys().munmap(addr, length);
}

bool SimMachine::read_file(const std::string& path, std::string* out) {
  for (FrontEnd* fe : {static_cast<FrontEnd*>(rm_.get()), static_cast<FrontEnd*>(tegra_.get())}) {
    if ((fe == rm_.get() && !rm_present_) || (fe == tegra_.get() && !tegra_present_)) continue;
    auto files = fe->files();
    auto it = files.find(path);
    if (it != files.end()) {
      *out = it->second;
      return true;
    }
  }
  if (simulated_path(path) || path == "/etc/nv_tegra_release") return false;
  return drv::real_sys().read_file(path, out);
}

bool SimMachine::exists(const std::string& path) {
  if (owner(path) != nullptr) return true;
  std::string content;
  if (read_file(path, &content)) return true;
  if (simulated_path(path)) return false;
  return drv::real_sys().exists(path);
}

std::vector<std::string> SimMachine::list_dir(const std::string& path) {
  std::vector<std::string> names;
  if (!simulated_path(path)) {
    for (auto& n : drv::real_sys().list_dir(path)) {
      if (!simulated_path(path + "/" + n)) names.push_back(n);
    }
  }
  std::string prefix = path + "/";
  auto add_nodes = [&](const std::vector<std::string>& nodes) {
    for (const auto& n : nodes) {
      if (n.rfind(prefix, 0) != 0) continue;
      std::string rest = n.substr(prefix.size());
      std::string first = rest.substr(0, rest.find('/'));
      if (std::find(names.begin(), names.end(), first) == names.end()) names.push_back(first);
    }
  };
  if (rm_present_) add_nodes(rm_->nodes());
  if (tegra_present_) add_nodes(tegra_->nodes());
  return names;
}

}  // namespace nvhcq::sim
