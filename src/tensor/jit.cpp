#include "tensor/jit.h"

#include <optional>
#include <sstream>
#include <string>

#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/capture.h"
#include "tensor/realize.h"

namespace nvhcq::tensor {
namespace {

// The buffer an (already realized) tensor reads, and the View it reads it through.
struct Binding {
  std::shared_ptr<Buffer> buffer;
  std::optional<View> view;
};

Binding binding_of(const Tensor& t) {
  const NodePtr& base = base_of(t.node());
  if (!base->realized()) throw Error("internal: Jit input or output is not realized");
  Binding b{base->buffer, std::nullopt};
  if (t.node()->op == Op::kView) b.view = t.node()->view;
  return b;
}

std::string shape_text(const Shape& s) {
  return shape_str(s);
}

// What a capture depends on: per input its dtype, its base's shape and the view.
std::string signature_of(const std::vector<Tensor>& inputs) {
  std::ostringstream s;
  for (const Tensor& t : inputs) {
    const NodePtr& base = base_of(t.node());
    s << dtype_name(t.dtype()) << shape_text(base->shape);
    if (t.node()->op == Op::kView) {
      const View& v = t.node()->view;
      s << "view" << shape_text(v.shape) << "st" << shape_text(v.strides) << "off" << v.offset;
      for (auto [lo, hi] : v.valid) s << "[" << lo << "," << hi << ")";
      if (v.masked()) s << "pad" << v.pad_value.to_string();
    }
    s << ";";
  }
  return s.str();
}

std::string describe(const std::vector<Tensor>& inputs) {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    out += (i ? ", " : "") + shape_text(t.shape()) + " " + dtype_name(t.dtype());
    if (!t.is_contiguous() || t.node()->op == Op::kView) out += " (view)";
  }
  return "(" + out + ")";
}

}  // namespace

struct Jit::Impl {
  struct Output {
    enum class Source { kSlot, kInput, kExternal } source = Source::kExternal;
    size_t index = 0;                  // slot or input index
    std::shared_ptr<Buffer> external;  // kExternal
    DType dtype = DType::kF32;
    Shape base_shape;
    std::optional<View> view;
  };
  struct Capture {
    std::unique_ptr<Recording> recording;
    std::vector<std::optional<size_t>> input_slots;
    std::vector<Output> outputs;
    std::vector<size_t> output_slots;  // distinct slots returned to the caller
  };
  struct Entry {
    std::string signature, described;
    size_t calls = 0;
    std::unique_ptr<Capture> capture;
  };

  Function f;
  JitOptions options;
  std::vector<Entry> entries;
  size_t arity = 0;
  bool have_arity = false;
  size_t calls = 0, replays = 0, last_launches = 0;

  std::vector<Tensor> run_function(const std::vector<Tensor>& inputs, const std::string& device) {
    std::vector<Tensor> outs = f(inputs);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].defined())
        throw Error("Jit: output " + std::to_string(i) + " of the function is an undefined tensor");
      if (!device.empty() && outs[i].device() != device) {
        throw Error("Jit: output " + std::to_string(i) + " is on device '" + outs[i].device() +
                    "', the inputs on '" + device + "'");
      }
    }
    Tensor::realize_all(outs);
    return outs;
  }

  std::unique_ptr<Capture> capture(CaptureBackend& cb, const std::vector<Tensor>& inputs,
                                   const std::string& device, std::vector<Tensor>& outs) {
    cb.begin_recording();
    try {
      outs = run_function(inputs, device);
    } catch (...) {
      (void)cb.end_recording();
      throw;
    }
    auto c = std::make_unique<Capture>();
    c->recording = cb.end_recording();
    Recording& rec = *c->recording;
    if (rec.read_back()) {
      throw Error(
          "Jit: the function read tensor data back to the host (to_vector, item, ...) while being "
          "captured; "
          "a captured function cannot be replayed when its work depends on values read on the "
          "host");
    }
    std::vector<Binding> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in.push_back(binding_of(inputs[i]));
      auto slot = rec.slot_of(in[i].buffer.get());
      if (slot && rec.slot_written(*slot))
        throw Error("Jit: the function writes into input " + std::to_string(i));
      c->input_slots.push_back(slot);
    }
    for (const Tensor& t : outs) {
      Binding b = binding_of(t);
      Output o;
      o.dtype = t.dtype();
      o.base_shape = base_of(t.node())->shape;
      o.view = b.view;
      auto slot = rec.slot_of(b.buffer.get());
      if (slot && rec.slot_written(*slot)) {
        o.source = Output::Source::kSlot;
        o.index = *slot;
        bool seen = false;
        for (size_t s : c->output_slots) seen = seen || s == *slot;
        if (!seen) c->output_slots.push_back(*slot);
      } else {
        o.source = Output::Source::kExternal;
        o.external = b.buffer;
        for (size_t i = 0; i < in.size(); ++i) {
          if (in[i].buffer == b.buffer) {
            o.source = Output::Source::kInput;
            o.index = i;
            o.external.reset();
            break;
          }
        }
      }
      c->outputs.push_back(std::move(o));
    }
    std::vector<size_t> inputs_used;
    for (const auto& s : c->input_slots)
      if (s) inputs_used.push_back(*s);
    rec.freeze_constants(inputs_used, c->output_slots);
    return c;
  }

  std::vector<Tensor> replay(Capture& c, Backend& backend, const std::vector<Tensor>& inputs,
                             const std::string& device) {
    Recording& rec = *c.recording;
    std::vector<Binding> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in.push_back(binding_of(inputs[i]));
      if (c.input_slots[i]) rec.set_slot(*c.input_slots[i], in[i].buffer);
    }
    // Outputs someone still holds get fresh buffers; unreferenced ones are reused.
    for (size_t s : c.output_slots) {
      if (rec.slot_buffer(s).use_count() > 1)
        rec.set_slot(s, backend.allocate(rec.slot_buffer(s)->bytes()));
    }
    if (rec.replayed_launches() > 0) rec.replay();
    std::vector<Tensor> outs;
    for (const Output& o : c.outputs) {
      std::shared_ptr<Buffer> buf;
      switch (o.source) {
        case Output::Source::kSlot:
          buf = rec.slot_buffer(o.index);
          break;
        case Output::Source::kInput:
          buf = in[o.index].buffer;
          break;
        case Output::Source::kExternal:
          buf = o.external;
          break;
      }
      NodePtr base = make_node(Op::kBuffer, o.dtype, o.base_shape, device);
      base->buffer = std::move(buf);
      if (!o.view) {
        outs.emplace_back(base);
        continue;
      }
      NodePtr v = make_node(Op::kView, o.dtype, o.view->shape, device, {base});
      v->view = *o.view;
      outs.emplace_back(v);
    }
    return outs;
  }
};

Jit::Jit(Function f, JitOptions options) : impl_(std::make_unique<Impl>()) {
  if (!f) throw Error("Jit: no function given");
  impl_->f = std::move(f);
  impl_->options = options;
}
Jit::~Jit() = default;
Jit::Jit(Jit&&) noexcept = default;
Jit& Jit::operator=(Jit&&) noexcept = default;

size_t Jit::calls() const {
  return impl_->calls;
}
size_t Jit::replays() const {
  return impl_->replays;
}
size_t Jit::captured_launches() const {
  return impl_->last_launches;
}
size_t Jit::captures() const {
  size_t n = 0;
  for (const auto& e : impl_->entries) n += e.capture ? 1 : 0;
  return n;
}
void Jit::reset() {
  impl_->entries.clear();
  impl_->have_arity = false;
}

std::vector<Tensor> Jit::operator()(const std::vector<Tensor>& inputs) {
  Impl& m = *impl_;
  if (m.have_arity && inputs.size() != m.arity) {
    throw Error("Jit: called with " + std::to_string(inputs.size()) + " inputs, captured with " +
                std::to_string(m.arity));
  }
  std::string device;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw Error("Jit: input " + std::to_string(i) + " is an undefined tensor");
    if (device.empty()) device = inputs[i].device();
    if (inputs[i].device() != device) {
      throw Error("Jit: inputs are on different devices ('" + device + "' and '" +
                  inputs[i].device() + "')");
    }
  }
  Tensor::realize_all(inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (base_of(inputs[i].node())->buffer == base_of(inputs[j].node())->buffer) {
        throw Error("Jit: inputs " + std::to_string(j) + " and " + std::to_string(i) +
                    " share a buffer; pass each buffer once (replays rebind inputs by buffer)");
      }
    }
  }
  const std::string sig = signature_of(inputs);
  Impl::Entry* entry = nullptr;
  for (auto& e : m.entries)
    if (e.signature == sig) entry = &e;
  if (entry == nullptr) {
    if (!m.entries.empty() && !m.options.recapture) {
      throw Error("Jit: called with inputs " + describe(inputs) + " but captured for " +
                  m.entries.front().described +
                  "; shapes, dtypes and views must match the capture (JitOptions::recapture allows "
                  "new captures)");
    }
    if (m.entries.size() >= m.options.max_captures) {
      throw Error("Jit: inputs " + describe(inputs) + " would be input signature " +
                  std::to_string(m.entries.size() + 1) + ", more than max_captures (" +
                  std::to_string(m.options.max_captures) + ")");
    }
    m.entries.push_back(Impl::Entry{sig, describe(inputs), 0, nullptr});
    entry = &m.entries.back();
  }
  m.arity = inputs.size();
  m.have_arity = true;

  Backend* backend = device.empty() ? nullptr : &backend_for(device);
  auto* cb = dynamic_cast<CaptureBackend*>(backend);
  if (cb != nullptr && cb->recording())
    return m.run_function(inputs, device);  // inside another capture
  ++m.calls;
  ++entry->calls;
  if (cb == nullptr || entry->calls == 1) return m.run_function(inputs, device);
  if (!entry->capture) {
    std::vector<Tensor> outs;
    entry->capture = m.capture(*cb, inputs, device, outs);
    m.last_launches = entry->capture->recording->replayed_launches();
    return outs;
  }
  ++m.replays;
  return m.replay(*entry->capture, *backend, inputs, device);
}

}  // namespace nvhcq::tensor
