// RmGpu's view of faults: the channel error notifier RM fills when it recovers a
// channel (Xid), and the debugger object's SM error state and MMU fault info.

#include <cstdio>
#include <memory>

#include "base/error.h"
#include "drv/rm/rm_client.h"
#include "drv/rm/rm_controls.h"
#include "drv/rm/rm_gpu.h"
#include "drv/rm/rm_params.h"

namespace nvhcq::drv::rm {
namespace {

// Robust-channel error codes RM reports (the Xid numbers of the kernel log).
const char* rc_error_name(uint32_t code) {
  switch (code) {
    case 8: return "GPU stopped processing (timeout)";
    case 13: return "graphics engine exception (illegal instruction, bad address, ...)";
    case 31: return "MMU fault (bad GPU virtual address)";
    case 32: return "invalid or corrupted pushbuffer stream";
    case 43: return "GPU stopped processing (reset channel)";
    case 45: return "preemptive cleanup after an earlier error";
    case 68: return "video processor exception";
    case 69: return "graphics engine class error (bad method)";
    default: return "channel error";
  }
}

}  // namespace

std::string RmGpu::channel_error() {
  if (notifier_cpu_ == nullptr) return {};
  uint16_t status = notifier_cpu_[0].status;
  if (status == 0) return {};
  uint32_t code = notifier_cpu_[0].info32;
  return "channel error Xid " + std::to_string(code) + ": " + rc_error_name(code);
}

std::string RmGpu::fault_report() {
  std::string report = channel_error();
  if (report.empty()) report = "no channel error reported";
  if (debugger_ == 0) return report + "; SM state unavailable (no debugger object)";
  RmClient& rm = RmClient::instance();
  char line[256];
  try {
    Nv83deReadMmuFaultInfoParams mmu{};
    rm.control(debugger_, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, mmu, "read MMU fault info");
    for (uint32_t i = 0; i < mmu.count && i < 4; ++i) {
      std::snprintf(line, sizeof(line), "; MMU fault at 0x%llx (type %u, access %u)",
                    static_cast<unsigned long long>(mmu.mmuFaultInfoList[i].faultAddress),
                    mmu.mmuFaultInfoList[i].faultType, mmu.mmuFaultInfoList[i].accessType);
      report += line;
    }
    auto sm = std::make_unique<Nv83deReadAllSmErrorStatesParams>();
    sm->hTargetChannel = compute_.gpfifo;
    sm->numSMsToRead = kMaxSmsPerCall;
    rm.control(debugger_, NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, *sm,
               "read SM error states");
    int shown = 0;
    for (int i = 0; i < kMaxSmsPerCall && shown < 4; ++i) {
      const auto& e = sm->smErrorStateArray[i];
      if (e.hwwGlobalEsr == 0 && e.hwwWarpEsr == 0) continue;
      std::snprintf(line, sizeof(line), "; SM %d: global esr 0x%x, warp esr 0x%x, pc 0x%llx", i,
                    e.hwwGlobalEsr, e.hwwWarpEsr,
                    static_cast<unsigned long long>(e.hwwWarpEsrPc64));
      report += line;
      ++shown;
    }
  } catch (const Error& e) {
    report += std::string("; debugger query failed: ") + e.what();
  }
  return report;
}

}  // namespace nvhcq::drv::rm
