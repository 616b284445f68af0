#include "tensor/backend.h"

#include <map>
#include <mutex>

#include "base/error.h"
#include "tensor/cpu_backend.h"
#include "tensor/gpu/gpu_backend.h"

namespace nvhcq::tensor {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, BackendFactory> factories;
  std::map<std::string, std::unique_ptr<Backend>> instances;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: buffers may outlive static destruction order
    reg->factories["cpu"] = [] { return std::make_unique<CpuBackend>(); };
    // The GPU devices: nvhcq's direct path and the CUDA driver API.
    reg->factories["nv"] = [] { return make_gpu_backend("nv"); };
    reg->factories["cuda"] = [] { return make_gpu_backend("cuda"); };
    return reg;
  }();
  return *r;
}

}  // namespace

void register_backend(const std::string& device, BackendFactory factory) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[device] = std::move(factory);
  r.instances.erase(device);
}

Backend& backend_for(const std::string& device) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto inst = r.instances.find(device);
  if (inst != r.instances.end()) return *inst->second;
  auto f = r.factories.find(device);
  if (f == r.factories.end()) {
    std::string known;
    for (auto& [name, _] : r.factories) known += (known.empty() ? "" : ", ") + name;
    throw Error("no tensor backend for device '" + device + "'", {}, 0, "known devices: " + known);
  }
  auto backend = f->second();
  if (!backend) throw Error("the backend for device '" + device + "' could not be created");
  Backend& ref = *backend;
  r.instances[device] = std::move(backend);
  return ref;
}

std::vector<std::string> registered_devices() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> out;
  for (auto& [name, _] : r.factories) out.push_back(name);
  return out;
}

}  // namespace nvhcq::tensor
