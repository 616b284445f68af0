#include "drv/rm/rm_client.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "drv/rm/rm_classes.h"
#include "drv/rm/rm_controls.h"
#include "drv/rm/rm_status.h"
#include "drv/rm/uvm_abi.h"

namespace nvhcq::drv::rm {
namespace {

std::string supported_list() {
  std::string out;
  for (int v : kSupportedDriverMajors) out += (out.empty() ? "" : ", ") + std::to_string(v) + ".x";
  return out;
}

// Issues an escape on `fd`; throws on an ioctl failure (not on an RM status).
void escape(int fd, uint32_t nr, void* params, size_t size, const char* what) {
  if (sys().ioctl(fd, ioctl_request(nr, size), params) != 0) {
    int err = errno;
    throw Error(std::string(what) + ": ioctl failed: " + std::strerror(err),
                "nvidia escape 0x" + std::to_string(nr), err);
  }
}

}  // namespace

RmClient& RmClient::instance() {
  static RmClient* client = new RmClient();  // lives for the process: RM objects die with the fds
  return *client;
}

RmClient::RmClient() {
  ctl_ = open_or_throw("/dev/nvidiactl", O_RDWR);
  Nvos21 made{};
  made.hClass = NV01_ROOT_CLIENT;
  escape(ctl_.get(), NV_ESC_RM_ALLOC, &made, sizeof(made), "allocate the RM root client");
  if (made.status != NV_OK)
    throw_status(made.status, "allocate the RM root client", "NV01_ROOT_CLIENT");
  root_ = made.hObjectNew;
  check_driver_version();
}

void RmClient::check_driver_version() {
  Nv0000BuildVersionV2Params v{};
  control(root_, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, v, "read the driver version");
  v.driverVersionBuffer[sizeof(v.driverVersionBuffer) - 1] = '\0';
  driver_version_ = v.driverVersionBuffer;
  int major = std::atoi(driver_version_.c_str());
  for (int supported : kSupportedDriverMajors) {
    if (major == supported) return;
  }
  const char* allow = std::getenv("NVHCQ_ALLOW_UNTESTED_DRIVER");
  if (allow != nullptr && std::string(allow) == "1") {
    log::warn("driver ", driver_version_, " is not one nvhcq supports (", supported_list(),
              "); continuing because NVHCQ_ALLOW_UNTESTED_DRIVER=1");
    return;
  }
  throw Error("NVIDIA driver " + driver_version_ +
                  " is not supported: nvhcq speaks the RM ABI of " + supported_list(),
              "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2", 0,
              "install a supported driver, or set NVHCQ_ALLOW_UNTESTED_DRIVER=1 at your own risk");
}

NvHandle RmClient::alloc(NvHandle parent, uint32_t cls, void* params, uint32_t params_size,
                         const char* what) {
  Nvos21 made{};
  made.hRoot = root_;
  made.hObjectParent = parent;
  made.hClass = cls;
  made.pAllocParms = reinterpret_cast<uint64_t>(params);
  made.paramsSize = params_size;
  escape(ctl_.get(), NV_ESC_RM_ALLOC, &made, sizeof(made), what);
  if (made.status != NV_OK) {
    char cls_hex[16];
    std::snprintf(cls_hex, sizeof(cls_hex), "class 0x%x", cls);
    throw_status(made.status, what, std::string("NV_ESC_RM_ALLOC ") + cls_hex);
  }
  log::trace("rm alloc ", what, " -> handle ", made.hObjectNew);
  return made.hObjectNew;
}

void RmClient::free(NvHandle parent, NvHandle object) {
  if (object == 0) return;
  Nvos00 params{};
  params.hRoot = root_;
  params.hObjectParent = parent;
  params.hObjectOld = object;
  if (sys().ioctl(ctl_.get(), ioctl_request(NV_ESC_RM_FREE, sizeof(params)), &params) != 0 ||
      params.status != NV_OK) {
    log::warn("RM free of handle ", object, " failed: ", status_name(params.status));
  }
}

void RmClient::control(NvHandle object, uint32_t cmd, void* params, uint32_t size,
                       const char* what) {
  Nvos54 c{};
  c.hClient = root_;
  c.hObject = object;
  c.cmd = cmd;
  c.params = reinterpret_cast<uint64_t>(params);
  c.paramsSize = size;
  escape(ctl_.get(), NV_ESC_RM_CONTROL, &c, sizeof(c), what);
  if (c.status != NV_OK) {
    char cmd_hex[32];
    std::snprintf(cmd_hex, sizeof(cmd_hex), "control 0x%x", cmd);
    throw_status(c.status, what, std::string("NV_ESC_RM_CONTROL ") + cmd_hex);
  }
}

std::vector<NvCardInfo> RmClient::cards() {
  std::vector<NvCardInfo> all(kMaxCards);
  escape(ctl_.get(), NV_ESC_CARD_INFO, all.data(), all.size() * sizeof(NvCardInfo),
         "list the GPUs (NV_ESC_CARD_INFO)");
  std::vector<NvCardInfo> valid;
  for (const auto& c : all) {
    if (c.valid) valid.push_back(c);
  }
  return valid;
}

Fd RmClient::open_gpu_fd(uint32_t minor) {
  Fd fd = open_or_throw("/dev/nvidia" + std::to_string(minor), O_RDWR);
  NvRegisterFd reg{ctl_.get()};
  escape(fd.get(), NV_ESC_REGISTER_FD, &reg, sizeof(reg), "register the GPU fd");
  return fd;
}

void RmClient::map_to_cpu(NvHandle device, NvHandle memory, uint64_t size, void* target,
                          uint32_t flags, uint32_t gpu_minor, bool system) {
  // RM attaches the mapping to the fd passed in; that fd is then mmap'd. The
  // mapping keeps the file alive, so the fd is closed right after.
  Fd map_fd = system ? open_or_throw("/dev/nvidiactl", O_RDWR) : open_gpu_fd(gpu_minor);
  Nvos33WithFd m{};
  m.params.hClient = root_;
  m.params.hDevice = device;
  m.params.hMemory = memory;
  m.params.length = size;
  m.params.flags = flags;
  m.fd = map_fd.get();
  escape(ctl_.get(), NV_ESC_RM_MAP_MEMORY, &m, sizeof(m), "map GPU memory for the CPU");
  if (m.params.status != NV_OK) {
    throw_status(m.params.status, "map GPU memory for the CPU", "NV_ESC_RM_MAP_MEMORY");
  }
  void* p =
      sys().mmap(target, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, map_fd.get(), 0);
  if (p == MAP_FAILED || p != target) {
    int err = errno;
    throw Error("mmap of GPU memory failed: " + std::string(std::strerror(err)), "mmap", err);
  }
}

NvHandle RmClient::next_handle() {
  std::lock_guard<std::mutex> lock(handle_mutex_);
  return ++handle_counter_;
}

}  // namespace nvhcq::drv::rm
