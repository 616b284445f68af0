#include "tensor/realize.h"

#include <map>
#include <unordered_set>

#include "base/error.h"

namespace nvhcq::tensor {

const NodePtr& base_of(const NodePtr& node) { return node->op == Op::kView ? node->src[0] : node; }

Schedule build_schedule(const std::vector<NodePtr>& outputs) {
  Schedule s;
  std::unordered_set<const Node*> seen;
  // Iterative post-order DFS: long op chains must not overflow the stack.
  struct Frame {
    NodePtr node;
    size_t next;
  };
  std::vector<Frame> stack;
  for (const auto& out : outputs) {
    if (out->realized() || !seen.insert(out.get()).second) continue;
    s.outputs.push_back(out);
    stack.push_back({out, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.node->src.size()) {
        NodePtr child = f.node->src[f.next++];
        if (!child->realized() && seen.insert(child.get()).second) stack.push_back({std::move(child), 0});
        continue;
      }
      s.nodes.push_back(std::move(f.node));
      stack.pop_back();
    }
  }
  return s;
}

void realize_nodes(const std::vector<NodePtr>& nodes) {
  std::map<std::string, std::vector<NodePtr>> by_device;
  for (const auto& n : nodes) {
    const NodePtr& base = base_of(n);
    if (!base->realized()) by_device[base->device].push_back(base);
  }
  for (auto& [device, outs] : by_device) {
    Schedule s = build_schedule(outs);
    if (s.outputs.empty()) continue;
    backend_for(device).execute(s);
    for (const auto& o : s.outputs) {
      if (!o->realized()) throw Error("internal: backend '" + device + "' left an output unrealized");
    }
  }
}

}  // namespace nvhcq::tensor
