#pragma once
// Backend: where tensors live and run. A backend allocates buffers, copies bytes
// in and out, and executes a Schedule: the not-yet-realized part of the graph
// needed for some outputs. Backends are registered by device name ("cpu"; the GPU
// backends add "nv" and "cuda") and created on first use.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/buffer.h"
#include "tensor/node.h"

namespace nvhcq::tensor {

// The work of one realize: `nodes` holds every unrealized node reachable from
// `outputs` through unrealized nodes, sources before users (Views included).
// After execute() every node in `outputs` is realized (kBuffer). A backend may
// realize other nodes too (the CPU backend realizes every non-View node), or fuse
// them away.
struct Schedule {
  std::vector<NodePtr> nodes;
  std::vector<NodePtr> outputs;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  // Whether tensors of this dtype can live here (f64 is CPU only, for example).
  virtual bool supports(DType dtype) const = 0;
  virtual std::shared_ptr<Buffer> allocate(size_t bytes) = 0;
  virtual void copy_in(Buffer& dst, size_t offset, const void* src, size_t bytes) = 0;
  virtual void copy_out(const Buffer& src, size_t offset, void* dst, size_t bytes) = 0;
  virtual void execute(const Schedule& schedule) = 0;
};

using BackendFactory = std::function<std::unique_ptr<Backend>()>;

// Registers a backend factory under a device name (replaces an earlier one).
void register_backend(const std::string& device, BackendFactory factory);
// The backend of a device, created on first use. Throws Error naming the known
// devices when none is registered under that name, or when the factory fails.
Backend& backend_for(const std::string& device);
// Names of the registered devices.
std::vector<std::string> registered_devices();

}  // namespace nvhcq::tensor
