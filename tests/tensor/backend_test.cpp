// Backend registry and device handling, with a second CPU-backed device standing
// in for a GPU.
#include <gtest/gtest.h>

#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/cpu_backend.h"
#include "tensor/nn.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {
namespace {

// A backend that counts executions and hides host pointers, so reads go through
// copy_out as they would for device memory.
class DeviceLikeBackend final : public Backend {
 public:
  const std::string& name() const override {
    static const std::string n = "fake";
    return n;
  }
  bool supports(DType t) const override { return t != DType::kF64; }
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    auto inner = cpu_.allocate(bytes);
    return std::make_shared<Wrapped>(this, inner);
  }
  void copy_in(Buffer& dst, size_t offset, const void* src, size_t bytes) override {
    cpu_.copy_in(*static_cast<Wrapped&>(dst).inner, offset, src, bytes);
  }
  void copy_out(const Buffer& src, size_t offset, void* dst, size_t bytes) override {
    ++copies_out;
    cpu_.copy_out(*static_cast<const Wrapped&>(src).inner, offset, dst, bytes);
  }
  void execute(const Schedule& s) override {
    ++executions;
    // Compute on the CPU: swap buffers in and out around the CPU backend.
    for (const auto& n : s.nodes) {
      for (auto& src : n->src) unwrap(*src);
      if (n->op == Op::kView) unwrap(*n->src[0]);
    }
    cpu_.execute(s);
    for (const auto& n : s.nodes) wrap(*n);
  }
  int executions = 0, copies_out = 0;

 private:
  struct Wrapped final : Buffer {
    Wrapped(Backend* b, std::shared_ptr<Buffer> in) : Buffer(b, in->bytes()), inner(std::move(in)) {}
    std::shared_ptr<Buffer> inner;
  };
  void unwrap(Node& n) {
    if (n.realized() && dynamic_cast<Wrapped*>(n.buffer.get())) n.buffer = static_cast<Wrapped&>(*n.buffer).inner;
  }
  void wrap(Node& n) {
    if (n.realized() && !dynamic_cast<Wrapped*>(n.buffer.get())) n.buffer = std::make_shared<Wrapped>(this, n.buffer);
  }
  CpuBackend cpu_;
};

DeviceLikeBackend* g_fake = nullptr;

class Devices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_backend("fake", [] {
      auto b = std::make_unique<DeviceLikeBackend>();
      g_fake = b.get();
      return b;
    });
  }
};

TEST_F(Devices, UnknownDeviceNamesTheKnownOnes) {
  try {
    Tensor::zeros({2}, DType::kF32, "nv7");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nv7"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos);
  }
}

TEST_F(Devices, DataMovesBetweenDevicesAndRunsThere) {
  Tensor a = Tensor::arange(6, DType::kF32).reshape({2, 3});
  Tensor d = a.to("fake");
  EXPECT_EQ(d.device(), "fake");
  Tensor r = (d * 2.0).t().contiguous();
  EXPECT_EQ(r.device(), "fake");
  const int before = g_fake->executions;
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 6, 2, 8, 4, 10}));
  EXPECT_EQ(g_fake->executions, before + 1);
  EXPECT_GT(g_fake->copies_out, 0);
  EXPECT_EQ(r.to("cpu").device(), "cpu");
}

TEST_F(Devices, MixingDevicesIsAnError) {
  Tensor a = Tensor::ones({2}, DType::kF32, "cpu"), b = Tensor::ones({2}, DType::kF32, "fake");
  EXPECT_THROW(a + b, Error);
  EXPECT_THROW(a.matmul(b), Error);
  EXPECT_THROW(Tensor::cat({a, b}), Error);
  EXPECT_THROW(nn::conv2d(Tensor::ones({1, 1, 3, 3}), Tensor::ones({1, 1, 1, 1}, DType::kF32, "fake")), Error);
}

TEST_F(Devices, UnsupportedDtypeOnADevice) {
  EXPECT_THROW(Tensor::zeros({2}, DType::kF64, "fake"), Error);
  EXPECT_THROW(Tensor::ones({2}, DType::kF32, "fake").cast(DType::kF64), Error);
  EXPECT_THROW(Tensor::from_vector<double>({1, 2}, {2}, DType::kF64, "fake"), Error);
}

TEST(CpuExecution, IndexOutOfRangeFailsWhenTheGraphRuns) {
  Tensor x = Tensor::arange(10, DType::kF32).reshape({2, 5});
  Tensor g = x.gather(1, Tensor::from_vector<int64_t>({0, 5}, {2, 1}));
  try {
    g.realize();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 5 is out of range"), std::string::npos) << e.what();
  }
  Tensor s = Tensor::zeros({3}).scatter_add(0, Tensor::from_vector<int64_t>({-1}, {1}), Tensor::ones({1}));
  EXPECT_THROW(s.realize(), Error);
  Tensor e = nn::embedding(Tensor::from_vector<int32_t>({7}, {1}), Tensor::ones({4, 2}));
  EXPECT_THROW(e.to_vector<float>(), Error);
}

}  // namespace
}  // namespace nvhcq::tensor
