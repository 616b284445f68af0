#pragma once
// Realizing: collecting the unrealized part of the graph behind some nodes into a
// Schedule and handing it to the nodes' backend.

#include <vector>

#include "tensor/backend.h"
#include "tensor/node.h"

namespace nvhcq::tensor {

// The node whose buffer a tensor's data lives in: src[0] for a View, else itself.
const NodePtr& base_of(const NodePtr& node);

// Builds the schedule for `outputs` (non-View nodes; realized ones are skipped).
Schedule build_schedule(const std::vector<NodePtr>& outputs);

// Realizes the bases of `nodes` on their devices (one schedule per device).
void realize_nodes(const std::vector<NodePtr>& nodes);

}  // namespace nvhcq::tensor
