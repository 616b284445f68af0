#include "tensor/gpu/fusion_plan.h"

#include <algorithm>

#include "base/error.h"

namespace nvhcq::tensor {
namespace {

bool is_fusable(Op op) {
  switch (op) {
    case Op::kUnary:
    case Op::kBinary:
    case Op::kWhere:
    case Op::kCast:
    case Op::kContiguous:
    case Op::kCat:
      return true;
    default:
      return false;
  }
}

// Elementwise ops whose sources are indexed exactly like their output.
bool is_pointwise(Op op) {
  return is_fusable(op) && op != Op::kCat;
}

// One use of a node by a schedule node, possibly through a View.
struct Use {
  const Node* user;
  const Node* view;  // the View the user reads the node through, or null
};

// True when reading through `view` maps a flat output position to the same flat
// position of the base (a reshape of a dense tensor).
bool identity_view(const Node* view, const Node* base) {
  if (view == nullptr) return true;
  const View& v = view->view;
  return !v.masked() && v.offset == 0 && v.is_contiguous() && numel(v.shape) == numel(base->shape);
}

// Library operands a kernel reads through arbitrary (unmasked) strides; the
// others must be dense row-major buffers.
bool reads_strided(const Node& lib, size_t operand) {
  return lib.op == Op::kMatmul && operand < 2;
}

// Plans `mm` as one row-major GEMM when the tensor-core kernels can run it: fills
// its two operands (and any copies to make first); false leaves it to the
// strided kernel.
bool plan_dense_gemm(const NodePtr& mm, std::unordered_set<const Node*>& mat,
                     std::vector<NodePtr>& operands, std::vector<NodePtr>& copies) {
  if (mm->dtype != DType::kF16 && mm->dtype != DType::kBF16) return false;
  const NodePtr& a = mm->src[0];
  const NodePtr& b = mm->src[1];
  const Shape& out = mm->shape;
  const size_t nd = out.size();
  const int64_t m = out[nd - 2], n = out[nd - 1], k = a->shape[nd - 1];
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < nd; ++d) batch *= out[d];
  const int64_t rows = batch * m;
  if (rows < 16 || n == 0 || k == 0 || rows * n * k < kTensorCoreMinMacs) return false;
  if (rows > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return false;
  // B must be the same [K, N] matrix for every batch.
  const View bv = b->op == Op::kView ? b->view : View::contiguous(b->shape);
  const NodePtr bbase = b->op == Op::kView ? b->src[0] : b;
  if (bv.masked() || bbase->op == Op::kConst) return false;
  for (size_t d = 0; d + 2 < nd; ++d) {
    if (out[d] != 1 && bv.strides[d] != 0) return false;
  }
  // A: row-major over [batch * M, K].
  if (a->op != Op::kView) {
    if (!a->realized()) mat.insert(a.get());
    operands.push_back(a);
  } else if (a->view.is_contiguous() && a->src[0]->op != Op::kConst) {
    if (!a->src[0]->realized()) mat.insert(a->src[0].get());
    operands.push_back(a);
  } else {
    NodePtr copy = make_node(Op::kContiguous, a->dtype, a->shape, a->device, {a});
    mat.insert(copy.get());
    copies.push_back(copy);
    operands.push_back(copy);
  }
  // B: the [K, N] matrix, as a View of its base; copied when it is not row-major.
  NodePtr slice = make_node(Op::kView, b->dtype, {k, n}, b->device, {bbase});
  slice->view.shape = {k, n};
  slice->view.strides = {bv.strides[nd - 2], bv.strides[nd - 1]};
  slice->view.offset = bv.offset;
  if (slice->view.is_contiguous()) {
    if (!bbase->realized()) mat.insert(bbase.get());
    operands.push_back(slice);
  } else {
    NodePtr copy = make_node(Op::kContiguous, b->dtype, {k, n}, b->device, {slice});
    mat.insert(copy.get());
    copies.push_back(copy);
    operands.push_back(copy);
  }
  return true;
}

}  // namespace

bool is_library_op(Op op) {
  switch (op) {
    case Op::kMatmul:
    case Op::kConv2d:
    case Op::kConvTranspose2d:
    case Op::kPool2d:
    case Op::kAttention:
      return true;
    default:
      return false;
  }
}

bool is_index_op(Op op) {
  return op == Op::kGather || op == Op::kScatterAdd || op == Op::kCumsum;
}

FusionPlan plan_fusion(const Schedule& schedule, const KernelTarget& target) {
  FusionPlan plan;
  auto& mat = plan.materialized;

  std::unordered_map<const Node*, std::vector<Use>> uses;
  for (const auto& n : schedule.nodes) {
    if (n->op == Op::kView) continue;
    for (const auto& s : n->src) {
      if (s->op == Op::kView) {
        const Node* base = s->src[0].get();
        if (!base->realized()) uses[base].push_back({n.get(), s.get()});
      } else if (!s->realized()) {
        uses[s.get()].push_back({n.get(), nullptr});
      }
    }
  }
  std::unordered_set<const Node*> outputs;
  for (const auto& o : schedule.outputs) outputs.insert(o.get());

  // Pass 1: materialization, in topological order.
  std::unordered_map<const Node*, int> cost, depth;
  std::unordered_map<const Node*, std::vector<NodePtr>>
      synthetic_before;  // library node -> its copies
  auto fused_base = [&](const NodePtr& s) -> const Node* {
    const Node* base = s->op == Op::kView ? s->src[0].get() : s.get();
    if (base->realized() || base->op == Op::kConst || mat.count(base)) return nullptr;
    return base;
  };
  for (const auto& np : schedule.nodes) {
    const Node* n = np.get();
    if (n->op == Op::kView || n->realized()) continue;
    if (n->op == Op::kConst) {
      if (outputs.count(n)) mat.insert(n);
      continue;
    }
    if (outputs.count(n) || is_library_op(n->op) || is_index_op(n->op) || n->op == Op::kReduce)
      mat.insert(n);
    if (!is_library_op(n->op)) {
      int c = 1, d = 1;
      for (const auto& s : n->src) {
        if (const Node* b = fused_base(s)) {
          c += cost[b];
          d = std::max(d, depth[b] + 1);
        }
      }
      cost[n] = c;
      depth[n] = d;
    }
    if (is_fusable(n->op) && !mat.count(n)) {
      const auto& u = uses[n];
      bool broadcast = false;
      for (const Use& use : u)
        broadcast = broadcast || (use.view && numel(use.view->shape) > numel(n->shape));
      const bool costly = cost[n] > FusionPlan::kMaxRecomputeOps;
      if ((u.size() > 1 && costly) || (broadcast && costly) ||
          depth[n] >= FusionPlan::kMaxFusedDepth) {
        mat.insert(n);
        cost[n] = 0;
        depth[n] = 0;
      }
    }
    if (n->op == Op::kMatmul && target.tensor_core_gemm) {
      std::vector<NodePtr> operands, copies;
      if (plan_dense_gemm(np, mat, operands, copies)) {
        plan.dense_gemm.insert(n);
        plan.library_operands[n] = operands;
        for (const auto& c : copies) {
          plan.synthetic.push_back(c);
          synthetic_before[n].push_back(c);
        }
        continue;
      }
    }
    if (is_library_op(n->op)) {
      std::vector<NodePtr>& operands = plan.library_operands[n];
      for (size_t i = 0; i < n->src.size(); ++i) {
        const NodePtr& s = n->src[i];
        if (s->op != Op::kView) {
          if (!s->realized()) mat.insert(s.get());  // a fused or constant operand gets a buffer
          operands.push_back(s);
          continue;
        }
        const Node* base = s->src[0].get();
        if (reads_strided(*n, i) && !s->view.masked() && base->op != Op::kConst) {
          if (!base->realized()) mat.insert(base);
          operands.push_back(s);
          continue;
        }
        NodePtr copy = make_node(Op::kContiguous, s->dtype, s->shape, s->device, {s});
        mat.insert(copy.get());
        plan.synthetic.push_back(copy);
        synthetic_before[n].push_back(copy);
        operands.push_back(copy);
      }
    }
  }

  // Pass 2: reductions whose only consumer is a pointwise chain become that
  // chain's prologue (the chain is their epilogue).
  std::unordered_map<const Node*, NodePtr> epilogue_of;  // chain root -> reduce
  std::unordered_map<const Node*, NodePtr> node_ptr;
  for (const auto& np : schedule.nodes) node_ptr[np.get()] = np;
  for (const auto& np : schedule.nodes) {
    const Node* root = np.get();
    if (!mat.count(root) || !is_pointwise(root->op)) continue;
    std::vector<const Node*> stack = {root};
    std::unordered_set<const Node*> seen;
    const Node* candidate = nullptr;
    while (!stack.empty() && candidate == nullptr) {
      const Node* u = stack.back();
      stack.pop_back();
      if (!seen.insert(u).second || !is_pointwise(u->op)) continue;
      for (const auto& s : u->src) {
        const Node* via = s->op == Op::kView ? s.get() : nullptr;
        const Node* base = via ? s->src[0].get() : s.get();
        if (base->realized() || base->op == Op::kConst || !identity_view(via, base)) continue;
        if (mat.count(base)) {
          if (base->op == Op::kReduce && !outputs.count(base) && uses[base].size() == 1 &&
              !epilogue_of.count(base)) {
            candidate = base;
            break;
          }
          continue;
        }
        stack.push_back(base);
      }
    }
    if (candidate != nullptr) {
      mat.erase(candidate);
      epilogue_of[root] = node_ptr.at(candidate);
      epilogue_of[candidate] = np;  // marks the reduce as taken
    }
  }

  // Kernels in topological order; synthetic copies right before their library node.
  for (const auto& np : schedule.nodes) {
    const Node* n = np.get();
    if (!mat.count(n)) continue;
    for (const auto& copy : synthetic_before[n])
      plan.kernels.push_back({PlannedKernel::Kind::kElementwise, copy, nullptr});
    PlannedKernel k;
    k.root = np;
    if (is_library_op(n->op)) {
      k.kind = PlannedKernel::Kind::kLibrary;
    } else if (n->op == Op::kReduce) {
      k.kind = PlannedKernel::Kind::kReduce;
      k.reduce = np;
    } else if (n->op == Op::kCumsum) {
      k.kind = PlannedKernel::Kind::kScan;
    } else if (auto it = epilogue_of.find(n);
               it != epilogue_of.end() && it->second->op == Op::kReduce) {
      k.kind = PlannedKernel::Kind::kReduce;
      k.reduce = it->second;
    }
    plan.kernels.push_back(std::move(k));
  }
  return plan;
}

}  // namespace nvhcq::tensor
