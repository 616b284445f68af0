#pragma once
// The CPU backend's library nodes (matmul, conv, pool, gather, scatter-add,
// cumsum, attention): inputs converted as each kernel needs, results stored in
// the node's dtype.

#include "tensor/buffer.h"
#include "tensor/node.h"

namespace nvhcq::tensor {

// Computes `node` (a library op whose sources are realized) into `out`.
void run_library_node(const Node& node, Buffer& out);

}  // namespace nvhcq::tensor
