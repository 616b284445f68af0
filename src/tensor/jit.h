#pragma once
// Jit: captures the kernels a tensor function runs and replays them.
//
//   nvhcq::tensor::Jit step([&](const std::vector<Tensor>& in) {
//     return std::vector<Tensor>{nn::linear(in[0], w, b).relu()};
//   });
//   for (...) Tensor y = step({x})[0];   // call 1 runs, call 2 captures, then replays
//
// For each distinct input signature (device, dtype, shape and view of every
// input) the first call runs the function as usual, the second runs it while the
// backend records its kernels, and later calls replay the recording as one graph
// (one submission of chained QMDs on "nv", a CUDA graph on "cuda") with the new
// inputs' buffers patched into the kernel arguments; the function itself is not
// called again. Launches that depend on no input (a transposed copy of a weight)
// ran at capture and are not replayed. Inputs are realized first; outputs come
// back realized.
//
// Semantics of a replay:
//   * inputs may be any tensors (views and constants included) whose signature
//     matches a capture; the function must not depend on anything else that
//     changes between calls: host data it uploads, Python-style non-tensor
//     arguments and other tensors it reads are frozen at capture time (tensors it
//     reads are kept alive by the capture);
//   * each call returns new output tensors: an output buffer is reused only when
//     nothing outside the Jit still holds the previous call's output;
//   * new signatures capture again (JitOptions::recapture, up to max_captures);
//     with recapture off, a call with other shapes, dtypes or views than the
//     capture is an Error naming both. A different number of inputs, inputs on
//     different devices or two inputs sharing a buffer are always errors;
//   * a function that reads tensor data back while being captured (to_vector,
//     item) cannot be replayed: the capture raises an Error.
// Backends that cannot record (the CPU backend) run the function on every call,
// with the same checks. A Jit called while another Jit captures runs its function
// directly, so the outer capture records its kernels.

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace nvhcq::tensor {

struct JitOptions {
  bool recapture = true;    // capture again for new input signatures
  size_t max_captures = 8;  // distinct signatures kept before calls fail
};

class Jit {
 public:
  using Function = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

  explicit Jit(Function f, JitOptions options = {});
  ~Jit();
  Jit(Jit&&) noexcept;
  Jit& operator=(Jit&&) noexcept;

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  size_t calls() const;
  size_t replays() const;   // calls served by replaying a capture
  size_t captures() const;  // input signatures captured
  // Kernel launches a replay of the most recent capture queues (launches that
  // depend only on captured weights ran once, at capture).
  size_t captured_launches() const;
  void reset();  // forgets every capture

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvhcq::tensor
