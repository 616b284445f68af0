#include "tensor/gpu/kernel_builder.h"

#include <cctype>

#include "base/error.h"
#include "tensor/gpu/scalar_code.h"

namespace nvhcq::tensor::codegen {
namespace {

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(std::isdigit(static_cast<unsigned char>(s[i])) || (i == 0 && s[i] == '-'))) return false;
  }
  return true;
}

std::string shape_key(const std::vector<int64_t>& shape) {
  std::string k;
  for (int64_t d : shape) k.append(std::to_string(d)).append("x");
  return k;
}

}  // namespace

std::string Index::key() const {
  if (flat) return "F" + expr;
  std::string k = "D";
  for (const auto& d : dims) k.append(d).append(",");
  return k;
}

KernelBuilder::KernelBuilder(const FusionPlan& plan, bool wide_index)
    : plan_(plan), wide_(wide_index) {
  memo_.emplace_back();
}

int KernelBuilder::param_of(const Node* n) {
  auto it = param_index_.find(n);
  if (it != param_index_.end()) return it->second;
  const int k = static_cast<int>(params_.size());
  params_.push_back(n);
  param_index_[n] = k;
  return k;
}

void KernelBuilder::line(const std::string& text) {
  out_ << std::string(2 * indent_, ' ') << text << "\n";
}
void KernelBuilder::open(const std::string& text) {
  line(text + " {");
  ++indent_;
}
void KernelBuilder::close(const std::string& text) {
  --indent_;
  line(text);
}
void KernelBuilder::push_scope() {
  memo_.emplace_back();
}
void KernelBuilder::pop_scope() {
  memo_.pop_back();
}
std::string KernelBuilder::fresh(const char* prefix) {
  return prefix + std::to_string(next_var_++);
}

std::string KernelBuilder::assign(const char* ctype, const std::string& expr) {
  const std::string name = fresh("t");
  line("const " + std::string(ctype) + " " + name + " = " + expr + ";");
  return name;
}

void KernelBuilder::bind(const Node* n, const Index& idx, const std::string& var) {
  memo_.back()[std::to_string(n->id) + "@" + idx.key()] = var;
}

std::string KernelBuilder::value(const Node* n, const Index& idx) {
  const std::string key = std::to_string(n->id) + "@" + idx.key();
  for (auto it = memo_.rbegin(); it != memo_.rend(); ++it) {
    auto hit = it->find(key);
    if (hit != it->end()) return hit->second;
  }
  std::string v = plan_.loads(n) ? load(n, idx) : emit_value(n, idx);
  memo_.back()[key] = v;
  return v;
}

std::string KernelBuilder::compute(const Node* n, const Index& idx) {
  return emit_value(n, idx);
}

std::vector<std::string> KernelBuilder::unravel(const std::string& flat,
                                                const std::vector<int64_t>& shape) {
  const std::string key = "U" + flat + ":" + shape_key(shape);
  std::vector<std::string> dims(shape.size(), "0");
  int first = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) {
      first = static_cast<int>(d);
      break;
    }
  }
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t ext = shape[d];
    if (ext != 1) {
      const std::string dkey = key + ":" + std::to_string(d);
      std::string found;
      for (auto it = memo_.rbegin(); it != memo_.rend() && found.empty(); ++it) {
        auto hit = it->find(dkey);
        if (hit != it->end()) found = hit->second;
      }
      if (found.empty()) {
        std::string e = stride == 1 ? flat : "(" + flat + ") / " + std::to_string(stride);
        if (static_cast<int>(d) != first) e = "(" + e + ") % " + std::to_string(ext);
        found = assign(idx_type(), e);
        memo_.back()[dkey] = found;
      }
      dims[d] = found;
    }
    stride *= ext;
  }
  return dims;
}

std::string KernelBuilder::dense_offset(const Index& idx, const std::vector<int64_t>& shape) {
  if (idx.flat) return idx.expr;
  std::string off;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && idx.dims[d] != "0") {
      std::string term = stride == 1 ? idx.dims[d] : idx.dims[d] + " * " + std::to_string(stride);
      off = off.empty() ? term : off + " + " + term;
    }
    stride *= shape[d];
  }
  return off.empty() ? "0" : off;
}

std::string KernelBuilder::offset_of(const std::vector<std::string>& dims,
                                     const std::vector<int64_t>& shape) {
  Index i;
  i.flat = false;
  i.dims = dims;
  return dense_offset(i, shape);
}

std::string KernelBuilder::load(const Node* n, const Index& idx) {
  const int k = param_of(n);
  const DType t = n->dtype;
  if (idx.flat && idx.affine) {
    const AffineLoad a{k, idx.offset};
    if (collect_affine) ++affine_loads[a];
    if (vector_element) {
      const std::string v = vector_element(a);
      if (!v.empty()) return assign(compute_ctype(t), load_expr(t, v));
    }
  }
  const std::string off = dense_offset(idx, n->shape);
  return assign(compute_ctype(t), load_expr(t, "p" + std::to_string(k) + "[" + off + "]"));
}

std::string KernelBuilder::emit_value(const Node* n, const Index& idx) {
  const char* ctype = compute_ctype(n->dtype);
  switch (n->op) {
    case Op::kConst:
      return literal(n->dtype, n->value);
    case Op::kView:
      return view_value(n, idx);
    case Op::kContiguous:
      return value(n->src[0].get(), idx);
    case Op::kCast: {
      const Node* s = n->src[0].get();
      const std::string v = value(s, idx);
      return assign(ctype, cast_expr(s->dtype, n->dtype, v));
    }
    case Op::kUnary: {
      const Node* s = n->src[0].get();
      const std::string v = value(s, idx);
      return assign(ctype, round_expr(n->dtype, unary_expr(n->unary_op, s->dtype, v)));
    }
    case Op::kBinary: {
      const Node* s = n->src[0].get();
      const std::string a = value(s, idx);
      const std::string b = value(n->src[1].get(), idx);
      return assign(ctype, round_expr(n->dtype, binary_expr(n->binary_op, s->dtype, a, b)));
    }
    case Op::kWhere: {
      const std::string c = value(n->src[0].get(), idx);
      const std::string a = value(n->src[1].get(), idx);
      const std::string b = value(n->src[2].get(), idx);
      return assign(ctype, "(" + c + ") != 0 ? (" + a + ") : (" + b + ")");
    }
    case Op::kCat:
      return cat_value(n, idx);
    case Op::kGather:
      return gather_value(n, idx);
    case Op::kScatterAdd:
      return scatter_add_value(n, idx);
    default:
      throw Error(std::string("internal: a fused GPU kernel cannot compute a ") + op_name(n->op) +
                  " node that is not materialized");
  }
}

std::string KernelBuilder::view_value(const Node* vn, const Index& idx) {
  const Node* base = vn->src[0].get();
  const View& view = vn->view;
  const DType t = vn->dtype;
  if (!view.masked() && idx.flat && view.is_contiguous()) {
    Index inner = idx;
    if (view.offset != 0) inner.expr = "(" + idx.expr + " + " + std::to_string(view.offset) + ")";
    inner.offset = idx.offset + view.offset;
    return value(base, inner);
  }
  const std::vector<std::string> dims = idx.flat ? unravel(idx.expr, view.shape) : idx.dims;
  // Validity of the padded view: a conjunction of per-axis range tests.
  std::string cond;
  bool never = false;
  if (view.masked()) {
    for (size_t d = 0; d < view.shape.size(); ++d) {
      const auto [lo, hi] = view.valid[d];
      if (lo >= hi) never = true;
      if (dims[d] == "0") {
        if (lo > 0 || hi <= 0) never = true;
        continue;
      }
      if (lo > 0) cond += (cond.empty() ? "" : " && ") + dims[d] + " >= " + std::to_string(lo);
      if (hi < view.shape[d])
        cond += (cond.empty() ? "" : " && ") + dims[d] + " < " + std::to_string(hi);
    }
  }
  const std::string pad = literal(t, view.pad_value);
  if (never || numel(base->shape) == 0) return pad;
  if (base->op == Op::kConst) {
    const std::string c = literal(t, base->value);
    return cond.empty() ? c : assign(compute_ctype(t), "(" + cond + ") ? " + c + " : " + pad);
  }
  std::string off = view.offset != 0 ? std::to_string(view.offset) : "";
  for (size_t d = 0; d < view.shape.size(); ++d) {
    if (view.shape[d] == 1 || view.strides[d] == 0 || dims[d] == "0") continue;
    const std::string term =
        view.strides[d] == 1 ? dims[d] : dims[d] + " * " + std::to_string(view.strides[d]);
    off = off.empty() ? term : off + " + " + term;
  }
  if (off.empty()) off = "0";
  std::string valid;
  if (!cond.empty()) {
    valid = assign("bool", cond);
    // Padding reads base element 0 (which exists): no out-of-bounds access.
    off = assign(idx_type(), valid + " ? (" + off + ") : 0");
  } else if (!is_number(off)) {
    off = assign(idx_type(), off);
  }
  const std::string v = value(base, Index::flat_at(off));
  if (valid.empty()) return v;
  return assign(compute_ctype(t), valid + " ? " + v + " : " + pad);
}

std::string KernelBuilder::cat_value(const Node* n, const Index& idx) {
  const int a = n->axis;
  const std::vector<std::string> dims = idx.flat ? unravel(idx.expr, n->shape) : idx.dims;
  const char* ctype = compute_ctype(n->dtype);
  const std::string result = fresh("c");
  line(std::string(ctype) + " " + result + " = 0;");
  std::vector<size_t> pieces;
  for (size_t k = 0; k < n->src.size(); ++k) {
    if (n->src[k]->shape[a] > 0) pieces.push_back(k);
  }
  int64_t start = 0;
  size_t emitted = 0;
  for (size_t k = 0; k < n->src.size(); ++k) {
    const Node* s = n->src[k].get();
    const int64_t ext = s->shape[a];
    if (ext == 0) continue;
    const bool last = ++emitted == pieces.size();
    const std::string head = emitted == 1 ? "" : "else ";
    if (last) {
      open(emitted == 1 ? "" : "else");
    } else {
      open(head + "if (" + dims[a] + " < " + std::to_string(start + ext) + ")");
    }
    push_scope();
    std::vector<std::string> inner = dims;
    if (start != 0) inner[a] = "(" + dims[a] + " - " + std::to_string(start) + ")";
    Index pidx;
    pidx.flat = false;
    pidx.dims = inner;
    const std::string v = value(s, pidx);
    line(result + " = " + cast_expr(s->dtype, n->dtype, v) + ";");
    pop_scope();
    close();
    start += ext;
  }
  return result;
}

}  // namespace nvhcq::tensor::codegen

namespace nvhcq::tensor::codegen {

// out[i] = x[i with axis a replaced by index[i]]; an index out of range raises the
// error flag and reads element 0 of the axis instead.
std::string KernelBuilder::gather_value(const Node* n, const Index& idx) {
  const Node* x = n->src[0].get();
  const Node* index = n->src[1].get();
  const int a = n->axis;
  const std::vector<std::string> dims = idx.flat ? unravel(idx.expr, n->shape) : idx.dims;
  Index at;
  at.flat = false;
  at.dims = dims;
  const std::string k = value(index, at);
  uses_error_flag = true;
  const std::string bad =
      assign("bool", k + " < 0 || " + k + " >= " + std::to_string(x->shape[a]) + "LL");
  line("if (" + bad + ") nvt_raise(err, 1u);");
  at.dims[a] = assign(idx_type(), bad + " ? 0 : (" + std::string(idx_type()) + ")" + k);
  return value(x, at);
}

// out = x, plus src[p] for every position p of index (along the axis) whose index
// names this output position, added in index order and rounded per addition as
// the CPU backend does.
std::string KernelBuilder::scatter_add_value(const Node* n, const Index& idx) {
  const Node* x = n->src[0].get();
  const Node* index = n->src[1].get();
  const Node* src = n->src[2].get();
  const int a = n->axis;
  const std::vector<std::string> dims = idx.flat ? unravel(idx.expr, n->shape) : idx.dims;
  Index at;
  at.flat = false;
  at.dims = dims;
  const char* ctype = compute_ctype(n->dtype);
  const std::string acc = fresh("acc");
  line(std::string(ctype) + " " + acc + " = " + value(x, at) + ";");
  std::string cond;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (static_cast<int>(d) == a || index->shape[d] >= n->shape[d]) continue;
    cond += (cond.empty() ? "" : " && ") + dims[d] + " < " + std::to_string(index->shape[d]);
  }
  open(cond.empty() ? "" : "if (" + cond + ")");
  const std::string j = fresh("j");
  open("for (" + std::string(idx_type()) + " " + j + " = 0; " + j + " < " +
       std::to_string(index->shape[a]) + "; ++" + j + ")");
  push_scope();
  Index jat = at;
  jat.dims[a] = j;
  const std::string k = value(index, jat);
  uses_error_flag = true;
  line("if (" + k + " < 0 || " + k + " >= " + std::to_string(n->shape[a]) +
       "LL) nvt_raise(err, 2u);");
  open("if (" + k + " == " + dims[a] + ")");
  push_scope();
  const std::string v = value(src, jat);
  line(acc + " = " + round_expr(n->dtype, binary_expr(BinaryOp::kAdd, n->dtype, acc, v)) + ";");
  pop_scope();
  close();
  pop_scope();
  close();
  close();
  return acc;
}

}  // namespace nvhcq::tensor::codegen
