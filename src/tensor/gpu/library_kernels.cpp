#include "tensor/gpu/library_kernels.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/embedded.h"
#include "kernels/gemm_plan.h"
#include "tensor/gpu/fused_kernels.h"

namespace nvhcq::tensor {
namespace {

// Host mirrors of the argument structs in src/kernels/tensor_*.cu.
struct MmShape {
  int64_t m, n, k;
  int64_t batch[4];
  int32_t batch_dims, unused;
};
struct MmOperand {
  int64_t offset, row_stride, col_stride;
  int64_t batch_stride[4];
};
struct ConvGeom {
  int64_t n, c, h, w, o, oh, ow, kh;
};
struct ConvParams {
  int64_t kw, sh, sw, ph, pw, dh, dw, groups;
};
struct AttnShape {
  int64_t batch, q_len, kv_len, head_dim, value_dim;
  int32_t causal, has_mask;
};
static_assert(sizeof(MmShape) == 64 && sizeof(MmOperand) == 56 && sizeof(ConvGeom) == 64 &&
              sizeof(ConvParams) == 64 && sizeof(AttnShape) == 48);

constexpr uint32_t kMaxGrid = 1u << 20;

LaunchSpec library_spec(const char* file, const std::string& kernel, DType t,
                        const std::string& what) {
  LaunchSpec s;
  s.file = file;
  s.source = std::string(kernels::embedded_source(file));
  s.entry = kernel + "_" + dtype_name(t);
  s.what = what;
  return s;
}

void grid_for(LaunchSpec& s, int64_t work, uint32_t block = 256) {
  s.dims.block[0] = block;
  s.dims.grid[0] =
      static_cast<uint32_t>(std::clamp<int64_t>((work + block - 1) / block, 1, kMaxGrid));
}

// The node whose buffer holds an operand, and how the operand reads it.
struct Operand {
  const Node* base;
  View view;
};

Operand operand_of(const NodePtr& op) {
  if (op->op == Op::kView) return {op->src[0].get(), op->view};
  return {op.get(), View::contiguous(op->shape)};
}

const Node* dense_operand(const FusionPlan& plan, const Node* node, size_t i) {
  const NodePtr& op = plan.library_operands.at(node).at(i);
  if (op->op == Op::kView) throw Error("internal: library operand is not dense");
  return op.get();
}

std::string shape_text(const Shape& s) {
  return shape_str(s);
}

// A matmul planned as one row-major GEMM (FusionPlan::dense_gemm): the
// tensor-core kernel gemm_plan.h picks for the shape.
LaunchSpec lower_dense_gemm(const Node* node, const FusionPlan& plan, const KernelTarget& target) {
  const auto& ops = plan.library_operands.at(node);
  const Operand a = operand_of(ops[0]), b = operand_of(ops[1]);
  const Shape& out = node->shape;
  const size_t nd = out.size();
  kernels::GemmProblem p;
  p.type = node->dtype == DType::kBF16 ? kernels::GemmType::kBF16 : kernels::GemmType::kF16;
  p.m = static_cast<uint32_t>(numel(out) / out[nd - 1]);
  p.n = static_cast<uint32_t>(out[nd - 1]);
  p.k = static_cast<uint32_t>(b.view.shape[0]);
  const uint64_t a_bytes = static_cast<uint64_t>(a.view.offset) * 2,
                 b_bytes = static_cast<uint64_t>(b.view.offset) * 2;
  p.aligned16 = a_bytes % 16 == 0 && b_bytes % 16 == 0;
  const kernels::KernelLaunch l = kernels::plan_gemm(p, target.sm_count);
  LaunchSpec s;
  s.file = l.file;
  s.source = std::string(kernels::embedded_source(l.file));
  s.entry = l.kernel;
  s.what = "matmul [" + std::to_string(p.m) + ", " + std::to_string(p.k) + "] @ [" +
           std::to_string(p.k) + ", " + std::to_string(p.n) + "] " + dtype_name(node->dtype) +
           " on tensor cores (" + l.variant + ")";
  s.args = {ArgSpec::buffer(node),
            ArgSpec::buffer(a.base, a_bytes),
            ArgSpec::buffer(b.base, b_bytes),
            ArgSpec::value<int32_t>(static_cast<int32_t>(p.m)),
            ArgSpec::value<int32_t>(static_cast<int32_t>(p.n)),
            ArgSpec::value<int32_t>(static_cast<int32_t>(p.k))};
  for (int i = 0; i < 3; ++i) {
    s.dims.grid[i] = l.grid[i];
    s.dims.block[i] = l.block[i];
  }
  s.dims.dynamic_shared_bytes = l.shared_bytes;
  return s;
}

// Rows up to which matmuls take the thin kernel (NVT_MM_THIN_ROWS in tensor_matmul.cu).
constexpr int64_t kThinMatmulRows = 4;

LaunchSpec lower_matmul(const Node* node, const FusionPlan& plan, const KernelTarget& target) {
  if (plan.dense_gemm.count(node)) return lower_dense_gemm(node, plan, target);
  const auto& ops = plan.library_operands.at(node);
  const Operand a = operand_of(ops[0]), b = operand_of(ops[1]);
  const Shape& out = node->shape;
  const size_t nd = out.size();
  MmShape shape{};
  shape.m = out[nd - 2];
  shape.n = out[nd - 1];
  shape.k = a.view.shape[nd - 1];
  MmOperand ao{}, bo{};
  ao.offset = a.view.offset;
  ao.row_stride = a.view.strides[nd - 2];
  ao.col_stride = a.view.strides[nd - 1];
  bo.offset = b.view.offset;
  bo.row_stride = b.view.strides[nd - 2];
  bo.col_stride = b.view.strides[nd - 1];
  // Batch axes: drop extent-1 axes, merge neighbours that step through memory as one.
  struct Axis {
    int64_t ext, as, bs;
  };
  std::vector<Axis> axes;
  for (size_t d = 0; d + 2 < nd; ++d) {
    if (out[d] == 1) continue;
    Axis cur{out[d], a.view.strides[d], b.view.strides[d]};
    if (!axes.empty() && axes.back().as == cur.as * cur.ext && axes.back().bs == cur.bs * cur.ext) {
      axes.back() = Axis{axes.back().ext * cur.ext, cur.as, cur.bs};
    } else {
      axes.push_back(cur);
    }
  }
  if (axes.size() > 4) {
    throw Error(
        "matmul of shape " + shape_text(out) +
        ": more than 4 batch axes that cannot be merged are not supported on the GPU backends");
  }
  int64_t batches = 1;
  for (size_t i = 0; i < 4; ++i) shape.batch[i] = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    shape.batch[i] = axes[i].ext;
    ao.batch_stride[i] = axes[i].as;
    bo.batch_stride[i] = axes[i].bs;
    batches *= axes[i].ext;
  }
  shape.batch_dims = static_cast<int32_t>(axes.size());
  const int64_t gy = (shape.m + 63) / 64;
  if (gy > 65535)
    throw Error("matmul with " + std::to_string(shape.m) + " rows is too tall for one launch");
  // A few rows (a batch-1 linear layer): 32 columns per CTA with k split across
  // its warps, instead of 64x64 tiles that leave most SMs idle.
  const bool thin = shape.m <= kThinMatmulRows;
  LaunchSpec s =
      library_spec("tensor_matmul.cu", thin ? "nvt_matmul_thin" : "nvt_matmul", node->dtype,
                   "matmul " + shape_text(a.view.shape) + " @ " + shape_text(b.view.shape) + " " +
                       dtype_name(node->dtype));
  s.args = {ArgSpec::buffer(node), ArgSpec::buffer(a.base), ArgSpec::buffer(b.base),
            ArgSpec::value(shape), ArgSpec::value(ao),      ArgSpec::value(bo)};
  s.dims.block[0] = 256;
  if (thin) {
    s.dims.block[0] = 1024;  // 32 columns x 32 k-slices (NVT_MM_THIN_SLICES)
    s.dims.grid[0] = static_cast<uint32_t>(std::max<int64_t>(1, (shape.n + 31) / 32));
    s.dims.grid[2] = static_cast<uint32_t>(std::clamp<int64_t>(batches, 1, 65535));
    return s;
  }
  s.dims.grid[0] = static_cast<uint32_t>(std::max<int64_t>(1, (shape.n + 63) / 64));
  s.dims.grid[1] = static_cast<uint32_t>(std::max<int64_t>(1, gy));
  s.dims.grid[2] = static_cast<uint32_t>(std::clamp<int64_t>(batches, 1, 65535));
  return s;
}

LaunchSpec lower_conv(const Node* node, const FusionPlan& plan) {
  const Node* x = dense_operand(plan, node, 0);
  const Node* w = dense_operand(plan, node, 1);
  const ConvArgs& c = node->conv;
  ConvGeom g{x->shape[0],    x->shape[1],    x->shape[2],    x->shape[3],
             node->shape[1], node->shape[2], node->shape[3], w->shape[2]};
  ConvParams p{w->shape[3],  c.stride[0],   c.stride[1],   c.padding[0],
               c.padding[1], c.dilation[0], c.dilation[1], c.groups};
  const bool transposed = node->op == Op::kConvTranspose2d;
  LaunchSpec s = library_spec("tensor_conv.cu", transposed ? "nvt_conv_transpose2d" : "nvt_conv2d",
                              node->dtype,
                              std::string(op_name(node->op)) + " x" + shape_text(x->shape) + " w" +
                                  shape_text(w->shape) + " " + dtype_name(node->dtype));
  s.args = {
      ArgSpec::buffer(node),
      ArgSpec::buffer(x),
      ArgSpec::buffer(w),
      c.has_bias ? ArgSpec::buffer(dense_operand(plan, node, 2)) : ArgSpec::value<uint64_t>(0),
      ArgSpec::value(g),
      ArgSpec::value(p)};
  grid_for(s, numel(node->shape));
  return s;
}

LaunchSpec lower_pool(const Node* node, const FusionPlan& plan) {
  const Node* x = dense_operand(plan, node, 0);
  const PoolArgs& pa = node->pool;
  ConvGeom g{x->shape[0], x->shape[1],    x->shape[2],    x->shape[3],
             x->shape[1], node->shape[2], node->shape[3], pa.kernel[0]};
  ConvParams p{pa.kernel[1],  pa.stride[0],   pa.stride[1],   pa.padding[0],
               pa.padding[1], pa.dilation[0], pa.dilation[1], 1};
  LaunchSpec s = library_spec("tensor_conv.cu", "nvt_pool2d", node->dtype,
                              std::string(pa.max ? "max" : "avg") + "_pool2d x" +
                                  shape_text(x->shape) + " " + dtype_name(node->dtype));
  s.args = {ArgSpec::buffer(node),
            ArgSpec::buffer(x),
            ArgSpec::value(g),
            ArgSpec::value(p),
            ArgSpec::value<int32_t>(pa.max ? 1 : 0),
            ArgSpec::value<int32_t>(pa.count_include_pad ? 1 : 0)};
  grid_for(s, numel(node->shape));
  return s;
}

LaunchSpec lower_attention(const Node* node, const FusionPlan& plan) {
  const Node* q = dense_operand(plan, node, 0);
  const Node* k = dense_operand(plan, node, 1);
  const Node* v = dense_operand(plan, node, 2);
  const Shape& qs = q->shape;
  const size_t nd = qs.size();
  AttnShape a{};
  a.batch = 1;
  for (size_t d = 0; d + 2 < nd; ++d) a.batch *= qs[d];
  a.q_len = qs[nd - 2];
  a.head_dim = qs[nd - 1];
  a.kv_len = k->shape[nd - 2];
  a.value_dim = v->shape[nd - 1];
  a.causal = node->attention.causal ? 1 : 0;
  a.has_mask = node->attention.has_mask ? 1 : 0;
  const int64_t rows = a.batch * a.q_len;
  LaunchSpec s = library_spec("tensor_attention.cu", "nvt_attention", node->dtype,
                              "attention q" + shape_text(qs) + " k" + shape_text(k->shape) + " v" +
                                  shape_text(v->shape) + " " + dtype_name(node->dtype));
  s.args = {
      ArgSpec::buffer(node),
      ArgSpec::buffer(q),
      ArgSpec::buffer(k),
      ArgSpec::buffer(v),
      a.has_mask ? ArgSpec::buffer(dense_operand(plan, node, 3)) : ArgSpec::value<uint64_t>(0),
      ArgSpec::scratch(static_cast<size_t>(std::max<int64_t>(1, rows * a.kv_len)) * sizeof(float)),
      ArgSpec::value(a),
      ArgSpec::value(static_cast<float>(node->attention.scale))};
  s.dims.block[0] = 128;
  s.dims.grid[0] = static_cast<uint32_t>(std::clamp<int64_t>(rows, 1, 65535));
  return s;
}

}  // namespace

LaunchSpec lower_library(const Node* node, const FusionPlan& plan, const KernelTarget& target) {
  switch (node->op) {
    case Op::kMatmul:
      return lower_matmul(node, plan, target);
    case Op::kConv2d:
    case Op::kConvTranspose2d:
      return lower_conv(node, plan);
    case Op::kPool2d:
      return lower_pool(node, plan);
    case Op::kAttention:
      return lower_attention(node, plan);
    default:
      break;
  }
  throw Error(std::string("internal: no GPU library kernel for op ") + op_name(node->op));
}

}  // namespace nvhcq::tensor

namespace nvhcq::tensor {

LaunchSpec lower_kernel(const PlannedKernel& k, const FusionPlan& plan,
                        const KernelTarget& target) {
  switch (k.kind) {
    case PlannedKernel::Kind::kElementwise:
      return generate_elementwise(k.root.get(), plan, target);
    case PlannedKernel::Kind::kReduce:
      return generate_reduce(k.reduce.get(), k.root.get(), plan, target);
    case PlannedKernel::Kind::kScan:
      return generate_scan(k.root.get(), plan, target);
    case PlannedKernel::Kind::kLibrary:
      return lower_library(k.root.get(), plan, target);
  }
  throw Error("internal: unknown kernel kind");
}

}  // namespace nvhcq::tensor
