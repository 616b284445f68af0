#pragma once
// KernelBuilder: writes the body of one fused kernel as straight-line CUDA C.
// value(node, index) emits the code computing `node` at `index` and returns the
// variable holding it (in the node dtype's compute type): loads for realized or
// materialized nodes, literals for constants, index arithmetic for Views, the op
// (rounded to the node's dtype, as the CPU backend rounds each node) for
// elementwise nodes. Results are memoized per (node, index) within nested scopes,
// so a subexpression used twice is computed once.
//
// An Index is either flat (a C expression for the element's position in the
// node's row-major layout) or a multi-index (one C expression per axis). Flat
// indices that are the kernel's element position plus a constant are "affine":
// loads through them can be vectorized.

#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/gpu/fusion_plan.h"
#include "tensor/node.h"

namespace nvhcq::tensor::codegen {

struct Index {
  bool flat = true;
  std::string expr;               // flat: the element position
  bool affine = false;            // flat: expr == <element variable> + offset
  int64_t offset = 0;             // affine offset
  std::vector<std::string> dims;  // multi-index: per-axis expressions ("0" for extent-1 axes)

  static Index flat_at(const std::string& expr) { return Index{true, expr, false, 0, {}}; }
  std::string key() const;
};

// A load that can be served from a vector read: buffer parameter `param` at the
// kernel's element position plus `offset`.
struct AffineLoad {
  int param;
  int64_t offset;
  bool operator<(const AffineLoad& o) const {
    return param != o.param ? param < o.param : offset < o.offset;
  }
};

class KernelBuilder {
 public:
  KernelBuilder(const FusionPlan& plan, bool wide_index);

  // The pointer parameter for a node's buffer (registered on first use).
  int param_of(const Node* n);
  const std::vector<const Node*>& params() const { return params_; }
  // Registers the output buffer (parameter 0) before any load.
  void set_output(const Node* n) { param_of(n); }

  std::string value(const Node* n, const Index& idx);
  // The same, but computes `n` even when it is materialized: for the node a
  // kernel writes.
  std::string compute(const Node* n, const Index& idx);
  // Pre-binds a node's value at an index (a reduction's accumulator in its epilogue).
  void bind(const Node* n, const Index& idx, const std::string& var);

  // The row-major element offset of a multi-index over `shape`.
  std::string offset_of(const std::vector<std::string>& dims, const std::vector<int64_t>& shape);
  // Splits a flat position into a multi-index over `shape` (variables emitted once).
  std::vector<std::string> unravel(const std::string& flat, const std::vector<int64_t>& shape);

  // Emits a line of code at the current indentation.
  void line(const std::string& text);
  void open(const std::string& text);  // "text {" and indent
  void close(const std::string& text = "}");
  void push_scope();
  void pop_scope();
  std::string fresh(const char* prefix);
  std::string code() const { return out_.str(); }
  const char* idx_type() const { return wide_ ? "long long" : "int"; }

  // Affine loads: recorded while `collect_affine` is set; served from vector
  // variables (name of element j) while `vector_element` is set.
  bool collect_affine = false;
  // Set once the kernel reports data-dependent errors through an `err` parameter.
  bool uses_error_flag = false;
  std::map<AffineLoad, int> affine_loads;  // load -> times seen
  std::function<std::string(const AffineLoad&)> vector_element;

 private:
  std::string emit_value(const Node* n, const Index& idx);
  std::string view_value(const Node* v, const Index& idx);
  std::string cat_value(const Node* n, const Index& idx);
  std::string gather_value(const Node* n, const Index& idx);
  std::string scatter_add_value(const Node* n, const Index& idx);
  std::string load(const Node* n, const Index& idx);
  std::string dense_offset(const Index& idx, const std::vector<int64_t>& shape);
  std::string assign(const char* ctype, const std::string& expr);

  const FusionPlan& plan_;
  bool wide_;
  std::vector<const Node*> params_;
  std::unordered_map<const Node*, int> param_index_;
  std::vector<std::unordered_map<std::string, std::string>> memo_;
  std::ostringstream out_;
  int indent_ = 1;
  int next_var_ = 0;
};

}  // namespace nvhcq::tensor::codegen
