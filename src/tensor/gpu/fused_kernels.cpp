#include "tensor/gpu/fused_kernels.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "base/error.h"
#include "tensor/gpu/kernel_builder.h"
#include "tensor/gpu/scalar_code.h"

namespace nvhcq::tensor {
namespace {

using codegen::Index;
using codegen::KernelBuilder;

constexpr int kBlock = 256;
constexpr int64_t kNarrowIndexLimit = int64_t{1} << 30;  // 32-bit index math below this
constexpr uint32_t kMaxGrid = 1u << 20;                  // grid-stride loops beyond this

std::string shape_tag(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t.append(i ? "x" : "").append(std::to_string(s[i]));
  return t;
}

// The largest element count any node (or view base) the kernel touches has:
// decides between 32- and 64-bit index arithmetic.
int64_t max_elements(const Node* root, const FusionPlan& plan) {
  int64_t m = numel(root->shape);
  std::vector<const Node*> stack = {root};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    m = std::max(m, numel(n->shape));
    if (n != root && plan.loads(n)) continue;
    for (const auto& s : n->src) stack.push_back(s.get());
  }
  return m;
}

Index affine(const std::string& var) {
  Index i = Index::flat_at(var);
  i.affine = true;
  return i;
}

std::string signature(const std::string& name, const KernelBuilder& b, const Node* out) {
  std::string sig = "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kBlock) +
                    ") " + name + "(";
  const auto& params = b.params();
  for (size_t k = 0; k < params.size(); ++k) {
    const char* st = codegen::storage_ctype(params[k]->dtype);
    sig += k ? ", " : "";
    sig += (k == 0 ? std::string(st) + "* __restrict__ p0"
                   : "const " + std::string(st) + "* __restrict__ p" + std::to_string(k));
  }
  if (b.uses_error_flag) sig += ", unsigned* __restrict__ err";
  (void)out;
  return sig + ")";
}

LaunchSpec finish(const std::string& name, const std::string& what, const KernelBuilder& b,
                  const Node* out, const std::string& body, uint64_t blocks) {
  LaunchSpec s;
  s.file = name + ".cu";
  s.entry = name;
  s.what = what;
  s.source = "// " + what + "\n#include \"tensor_common.cuh\"\n\n" + signature(name, b, out) +
             " {\n" + body + "}\n";
  for (const Node* n : b.params()) s.args.push_back(ArgSpec::buffer(n));
  if (b.uses_error_flag) s.args.push_back(ArgSpec::error_flag());
  s.dims.block[0] = kBlock;
  s.dims.grid[0] = static_cast<uint32_t>(std::clamp<uint64_t>(blocks, 1, kMaxGrid));
  return s;
}

void describe(const Node* n, const FusionPlan& plan, bool root, std::string& out, size_t max_len) {
  if (out.size() > max_len) return;
  if (!root && plan.loads(n)) {
    out += "buf[" + shape_tag(n->shape) + "] " + dtype_name(n->dtype);
    return;
  }
  switch (n->op) {
    case Op::kConst:
      out += n->value.to_string();
      return;
    case Op::kView:
      out += "view(";
      break;
    case Op::kUnary:
      out += std::string(cpu::op_name(n->unary_op)) + "(";
      break;
    case Op::kBinary:
      out += std::string(cpu::op_name(n->binary_op)) + "(";
      break;
    case Op::kReduce:
      out += std::string(cpu::op_name(n->reduce_op)) + "(";
      break;
    case Op::kCast:
      out += std::string("cast_") + dtype_name(n->dtype) + "(";
      break;
    default:
      out += std::string(op_name(n->op)) + "(";
      break;
  }
  for (size_t i = 0; i < n->src.size(); ++i) {
    if (i) out += ", ";
    describe(n->src[i].get(), plan, false, out, max_len);
  }
  out += ")";
}

}  // namespace

std::string describe_fused(const Node* root, const FusionPlan& plan, size_t max_len) {
  std::string out;
  describe(root, plan, true, out, max_len);
  if (out.size() > max_len) out = out.substr(0, max_len) + "...";
  return out;
}

LaunchSpec generate_elementwise(const Node* root, const FusionPlan& plan,
                                const KernelTarget& target) {
  const int64_t n = numel(root->shape);
  if (n <= 0) throw Error("internal: elementwise kernel for an empty tensor");
  const bool wide = max_elements(root, plan) >= kNarrowIndexLimit;

  // Pass 1: which loads read the output position plus a constant.
  KernelBuilder probe(plan, wide);
  probe.set_output(root);
  probe.collect_affine = true;
  probe.compute(root, affine("i"));
  size_t widest = dtype_size(root->dtype);
  for (const auto& [load, count] : probe.affine_loads)
    widest = std::max(widest, dtype_size(probe.params()[load.param]->dtype));
  int vec = static_cast<int>(16 / widest);
  if (n < vec || is_index_op(root->op)) vec = 1;
  std::set<codegen::AffineLoad> vector_loads;
  if (vec > 1) {
    for (const auto& [load, count] : probe.affine_loads) {
      if (load.offset % vec == 0) vector_loads.insert(load);
    }
  }

  KernelBuilder b(plan, wide);
  b.set_output(root);
  const std::string I = b.idx_type();
  const char* out_st = codegen::storage_ctype(root->dtype);
  const int64_t vectors = (n + vec - 1) / vec;
  const std::string N = std::to_string(n);
  b.open("for (" + I + " v = (" + I + ")blockIdx.x * " + std::to_string(kBlock) +
         " + threadIdx.x; v < " + std::to_string(vectors) + "; v += (" + I + ")gridDim.x * " +
         std::to_string(kBlock) + ")");
  if (vec == 1) {
    b.line("const " + I + " i = v;");
    const std::string r = b.compute(root, affine("i"));
    b.line("p0[i] = " + codegen::store_expr(root->dtype, r) + ";");
  } else {
    const std::string V = std::to_string(vec);
    b.line("const " + I + " i0 = v * " + V + ";");
    const bool all_full = n % vec == 0;
    if (!all_full) b.open("if (i0 + " + V + " <= " + N + ")");
    for (const auto& load : vector_loads) {
      const char* st = codegen::storage_ctype(b.params().size() > static_cast<size_t>(load.param)
                                                  ? b.params()[load.param]->dtype
                                                  : probe.params()[load.param]->dtype);
      const std::string w = "w" + std::to_string(load.param) + "_" + std::to_string(load.offset);
      const std::string vt = "nvt_vec<" + std::string(st) + ", " + V + ">";
      b.line("const " + vt + " " + w + " = nvt_load_vec<" + st + ", " + V + ">(p" +
             std::to_string(load.param) + " + i0 + " + std::to_string(load.offset) + ");");
    }
    int element = 0;
    b.vector_element = [&](const codegen::AffineLoad& a) -> std::string {
      if (!vector_loads.count(a)) return "";
      return "w" + std::to_string(a.param) + "_" + std::to_string(a.offset) + ".v[" +
             std::to_string(element) + "]";
    };
    b.line("nvt_vec<" + std::string(out_st) + ", " + V + "> out;");
    for (element = 0; element < vec; ++element) {
      b.push_scope();
      const std::string iv = "i_" + std::to_string(element);
      b.line("const " + I + " " + iv + " = i0 + " + std::to_string(element) + ";");
      const std::string r = b.compute(root, affine(iv));
      b.line("out.v[" + std::to_string(element) + "] = " + codegen::store_expr(root->dtype, r) +
             ";");
      b.pop_scope();
    }
    b.line("nvt_store_vec<" + std::string(out_st) + ", " + V + ">(p0 + i0, out);");
    b.vector_element = nullptr;
    if (!all_full) {
      b.close();
      b.open("else");
      b.open("for (int j = 0; j < " + V + "; ++j)");
      b.line("const " + I + " i = i0 + j;");
      b.open("if (i < " + N + ")");
      b.push_scope();
      const std::string r = b.compute(root, affine("i"));
      b.line("p0[i] = " + codegen::store_expr(root->dtype, r) + ";");
      b.pop_scope();
      b.close();
      b.close();
      b.close();
    }
  }
  b.close();
  const std::string name = "ew_" + shape_tag(root->shape) + "_" + dtype_name(root->dtype);
  (void)target;
  return finish(name, describe_fused(root, plan), b, root, b.code(),
                static_cast<uint64_t>((vectors + kBlock - 1) / kBlock));
}

LaunchSpec generate_scan(const Node* root, const FusionPlan& plan, const KernelTarget& target) {
  const Node* x = root->src[0].get();
  const int a = root->axis;
  const int64_t len = root->shape[a];
  const int64_t n = numel(root->shape);
  if (n <= 0) throw Error("internal: cumsum kernel for an empty tensor");
  const int64_t lines = n / len;
  Shape line_shape = root->shape;
  line_shape[a] = 1;
  KernelBuilder b(plan, max_elements(root, plan) >= kNarrowIndexLimit);
  b.set_output(root);
  const std::string I = b.idx_type();
  const bool float_acc = is_float(root->dtype);
  b.open("for (" + I + " l = (" + I + ")blockIdx.x * " + std::to_string(kBlock) +
         " + threadIdx.x; l < " + std::to_string(lines) + "; l += (" + I + ")gridDim.x * " +
         std::to_string(kBlock) + ")");
  std::vector<std::string> dims = b.unravel("l", line_shape);
  b.line(float_acc ? "double acc = 0.0;" : "long long acc = 0;");
  b.open("for (" + I + " j = 0; j < " + std::to_string(len) + "; ++j)");
  b.push_scope();
  dims[a] = "j";
  Index at;
  at.flat = false;
  at.dims = dims;
  const std::string v = b.value(x, at);
  b.line(float_acc ? "acc += (double)" + v + ";" : "acc = nvt_add(acc, " + v + ");");
  const std::string store =
      float_acc ? codegen::store_double_expr(root->dtype, "acc")
                : codegen::store_expr(root->dtype, codegen::round_expr(root->dtype, "acc"));
  b.line("p0[" + b.offset_of(dims, root->shape) + "] = " + store + ";");
  b.pop_scope();
  b.close();
  b.close();
  (void)target;
  const std::string name = "scan_" + shape_tag(root->shape) + "_" + dtype_name(root->dtype);
  return finish(name, describe_fused(root, plan), b, root, b.code(),
                static_cast<uint64_t>((lines + kBlock - 1) / kBlock));
}

LaunchSpec generate_reduce(const Node* reduce, const Node* root, const FusionPlan& plan,
                           const KernelTarget& target) {
  const Node* src = reduce->src[0].get();
  const Shape& xs = src->shape;
  const ReduceOp op = reduce->reduce_op;
  const bool arg = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin;
  std::vector<bool> reduced(xs.size(), false);
  for (int a : reduce->axes) reduced[a] = true;
  Shape red_shape;
  int64_t nred = 1;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (reduced[d]) {
      red_shape.push_back(xs[d]);
      nred *= xs[d];
    }
  }
  const int64_t nout = numel(reduce->shape);
  if (nout <= 0) throw Error("internal: reduce kernel for an empty output");
  if (nred == 0 && (op != ReduceOp::kSum && op != ReduceOp::kProd)) {
    throw Error(std::string(cpu::op_name(op)) +
                " of an empty range has no value: the reduced axes have size 0");
  }

  // Lanes per output: row reductions (the innermost non-trivial axis reduced) get
  // a warp or a block; column reductions a thread per output when there are many.
  int last = -1;
  for (size_t d = 0; d < xs.size(); ++d)
    if (xs[d] != 1) last = static_cast<int>(d);
  const bool row = last >= 0 && reduced[last];
  const int64_t many = static_cast<int64_t>(target.sm_count) * 8;
  auto pow2 = [](int64_t v) {
    int g = 1;
    while (g < v && g < 32) g *= 2;
    return g;
  };
  int lanes;
  if (nred <= 1)
    lanes = 1;
  else if (nred > 1024 && nout < many)
    lanes = kBlock;
  else if (row)
    lanes = pow2(nred);
  else
    lanes = nout >= 2048 ? 1 : pow2(nred);
  const int groups = kBlock / lanes;

  const bool wide =
      std::max(max_elements(root, plan), max_elements(reduce, plan)) >= kNarrowIndexLimit;
  KernelBuilder b(plan, wide);
  b.set_output(root);
  const std::string I = b.idx_type();
  const DType vt = src->dtype;
  const std::string acc_t = codegen::compute_ctype(vt);
  const std::string ident = codegen::reduce_identity(op, vt);
  const std::string G = std::to_string(lanes);
  const std::string kmax = op == ReduceOp::kArgMax ? "true" : "false";

  if (lanes == kBlock) {
    b.line("__shared__ " + acc_t + " red_v[" + std::to_string(kBlock / 32) + "];");
    if (arg) b.line("__shared__ long long red_i[" + std::to_string(kBlock / 32) + "];");
  }
  b.line("const int lane = threadIdx.x % " + G + ";");
  b.line("const int group = threadIdx.x / " + G + ";");
  b.open("for (" + I + " ob = (" + I + ")blockIdx.x * " + std::to_string(groups) + "; ob < " +
         std::to_string(nout) + "; ob += (" + I + ")gridDim.x * " + std::to_string(groups) + ")");
  b.line("const " + I + " o = ob + group;");
  b.line("const bool active = o < " + std::to_string(nout) + ";");
  b.line(acc_t + " acc = " + ident + ";");
  if (arg) b.line("long long acc_i = -1;");
  b.open("if (active)");
  b.push_scope();
  const std::vector<std::string> kept = b.unravel("o", reduce->shape);
  b.open("for (" + I + " r = lane; r < " + std::to_string(nred) + "; r += " + G + ")");
  b.push_scope();
  const std::vector<std::string> rdims = b.unravel("r", red_shape);
  Index full;
  full.flat = false;
  for (size_t d = 0, k = 0; d < xs.size(); ++d)
    full.dims.push_back(reduced[d] ? rdims[k++] : kept[d]);
  const std::string v = b.value(src, full);
  if (arg)
    b.line("nvt_arg_update<" + kmax + ">(acc, acc_i, " + v + ", (long long)r);");
  else
    b.line("acc = " + codegen::reduce_combine(op, vt, "acc", v) + ";");
  b.pop_scope();
  b.close();
  b.pop_scope();
  b.close();

  auto merge_step = [&](const std::string& m) {
    if (arg) {
      b.line("nvt_arg_update<" + kmax + ">(acc, acc_i, nvt_shfl_xor(acc, " + m +
             "), nvt_shfl_xor(acc_i, " + m + "));");
    } else {
      b.line("acc = " + codegen::reduce_combine(op, vt, "acc", "nvt_shfl_xor(acc, " + m + ")") +
             ";");
    }
  };
  if (lanes > 1) {
    b.open("for (int m = " + std::to_string(std::min(lanes, 32) / 2) + "; m > 0; m >>= 1)");
    merge_step("m");
    b.close();
  }
  if (lanes == kBlock) {
    b.open("if ((threadIdx.x & 31) == 0)");
    b.line("red_v[threadIdx.x >> 5] = acc;");
    if (arg) b.line("red_i[threadIdx.x >> 5] = acc_i;");
    b.close();
    b.line("__syncthreads();");
    b.open("if (threadIdx.x < 32)");
    b.line("acc = threadIdx.x < " + std::to_string(kBlock / 32) +
           " ? red_v[threadIdx.x] : " + ident + ";");
    if (arg)
      b.line("acc_i = threadIdx.x < " + std::to_string(kBlock / 32) +
             " ? red_i[threadIdx.x] : -1;");
    b.open("for (int m = " + std::to_string(kBlock / 64) + "; m > 0; m >>= 1)");
    merge_step("m");
    b.close();
    b.close();
    b.line("__syncthreads();");
  }

  b.open("if (lane == 0 && active)");
  b.push_scope();
  const char* rt = codegen::compute_ctype(reduce->dtype);
  const std::string rv =
      arg ? "acc_i"
          : codegen::round_expr(reduce->dtype, codegen::cast_expr(vt, reduce->dtype, "acc"));
  const std::string rvar = b.fresh("red");
  b.line("const " + std::string(rt) + " " + rvar + " = " + rv + ";");
  std::string result = rvar;
  if (root != reduce) {
    b.bind(reduce, Index::flat_at("o"), rvar);
    result = b.compute(root, Index::flat_at("o"));
  }
  b.line("p0[o] = " + codegen::store_expr(root->dtype, result) + ";");
  b.pop_scope();
  b.close();
  b.close();

  const std::string name = std::string("red_") + cpu::op_name(op) + "_" + shape_tag(root->shape) +
                           "_" + dtype_name(root->dtype);
  std::string what = describe_fused(root, plan);
  if (root != reduce) what += " [reduction " + describe_fused(reduce, plan) + "]";
  const uint64_t blocks = static_cast<uint64_t>((nout + groups - 1) / groups);
  return finish(name, what, b, root, b.code(), std::min<uint64_t>(blocks, 65535));
}

}  // namespace nvhcq::tensor
