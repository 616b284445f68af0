// tensor::Jit on any backend (tests/tensor/tensor_gpu_instances.cpp runs it on
// "cpu" and the host emulator "emu"; tests/gpu/tensor_jit_gpu_test.cpp on "nv"
// and "cuda"). Modeled on tinygrad's test/test_jit.py: reuse across calls with
// new inputs, several outputs, views and constants as inputs, data uploaded
// inside the function, captured weights, shape changes (new capture, or an error
// when recapturing is off), duplicate inputs, nested Jits, long chains, and
// 1,000 captured functions alive at once. On backends that record (every GPU
// backend), the tests also check that calls after the second are replays.
#include "tensor/jit_cases.h"

#include <cmath>

#include "base/error.h"
#include "tensor/jit.h"
#include "tensor/nn.h"

namespace nvhcq::tensor {
namespace {

namespace nn = tensor::nn;

std::vector<float> host(const Tensor& t) {
  return t.to_vector<float>();
}

Tensor random(const Shape& shape, uint64_t seed, const std::string& device) {
  return Tensor::randn(shape, seed, DType::kF32, device);
}

::testing::AssertionResult near(const std::vector<float>& got, const std::vector<float>& want,
                                float tol = 1e-5f) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", expected " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<float> zip(const std::vector<float>& a, const std::vector<float>& b,
                       float (*f)(float, float)) {
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i]);
  return out;
}
float add(float a, float b) {
  return a + b;
}

}  // namespace

void JitSuite::SetUp() {
  const std::string why = test_device_unusable(GetParam());
  if (!why.empty()) GTEST_SKIP() << why;
  device = GetParam();
  records = test_device_records(device);
}

void JitSuite::expect_replays(const Jit& jit, size_t calls, size_t captures) const {
  EXPECT_EQ(jit.calls(), calls);
  if (records) {
    // Call 1 runs, call 2 captures, later calls with the same signature replay.
    EXPECT_EQ(jit.captures(), captures);
    EXPECT_EQ(jit.replays(), calls - 2 * captures);
  } else {
    EXPECT_EQ(jit.replays(), 0u);
  }
}

TEST_P(JitSuite, ReusesTheCaptureWithNewInputsEachCall) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; });
  for (int i = 0; i < 5; ++i) {
    Tensor a = random({10, 10}, 100 + i, device), b = random({10, 10}, 200 + i, device);
    Tensor c = f({a, b})[0];
    ASSERT_TRUE(near(host(c), zip(host(a), host(b), add))) << "call " << i;
  }
  expect_replays(f, 5, 1);
  if (records) {
    EXPECT_EQ(f.captured_launches(), 1u) << "a + b is one fused kernel";
  }
}

TEST_P(JitSuite, SeveralOutputs) {
  Jit f([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] + in[1], in[0] - in[1], in[0] * in[1]};
  });
  for (int i = 0; i < 5; ++i) {
    Tensor a = random({7, 9}, 300 + i, device), b = random({7, 9}, 400 + i, device);
    auto out = f({a, b});
    ASSERT_EQ(out.size(), 3u);
    auto x = host(a), y = host(b);
    ASSERT_TRUE(near(host(out[0]), zip(x, y, add)));
    ASSERT_TRUE(near(host(out[1]), zip(x, y, [](float p, float q) { return p - q; })));
    ASSERT_TRUE(near(host(out[2]), zip(x, y, [](float p, float q) { return p * q; })));
  }
  expect_replays(f, 5, 1);
}

TEST_P(JitSuite, EarlierOutputsKeepTheirValues) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].sum()}; });
  std::vector<Tensor> results;
  for (int i = 1; i <= 4; ++i) {
    results.push_back(
        f({Tensor::from_vector<float>({float(i), float(i)}, {2}, DType::kF32, device)})[0]);
  }
  for (int i = 1; i <= 4; ++i)
    EXPECT_EQ(results[i - 1].item<float>(), 2.0f * i) << "result of call " << i;
}

TEST_P(JitSuite, NewShapeCapturesAgain) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * 2.0).exp()}; });
  for (const Shape& s : {Shape{10, 10}, Shape{10, 10}, Shape{10, 10}, Shape{20, 20}, Shape{20, 20},
                         Shape{20, 20}, Shape{10, 10}}) {
    Tensor a = random(s, numel(s) + f.calls(), device);
    std::vector<float> want = host(a);
    for (float& v : want) v = std::exp(2 * v);
    ASSERT_TRUE(near(host(f({a})[0]), want)) << shape_str(s);
  }
  EXPECT_EQ(f.calls(), 7u);
  if (records) {
    EXPECT_EQ(f.captures(), 2u);
    EXPECT_EQ(f.replays(), 3u);
  }
}

TEST_P(JitSuite, WrongShapeAfterCaptureIsAnErrorWhenRecaptureIsOff) {
  JitOptions o;
  o.recapture = false;
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; }, o);
  for (int i = 0; i < 3; ++i) f({random({10, 10}, i, device), random({10, 10}, 10 + i, device)});
  try {
    f({random({10, 10}, 5, device), random({20, 20}, 6, device)});
    ADD_FAILURE() << "no error for a changed shape";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[20, 20]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[10, 10]"), std::string::npos) << msg;
  }
  EXPECT_THROW(f({random({10, 10}, 7, device).cast(DType::kF16), random({10, 10}, 8, device)}),
               Error)
      << "dtype change";
}

TEST_P(JitSuite, ViewOffsetIsPartOfTheSignature) {
  JitOptions strict;
  strict.recapture = false;
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.0}; }, strict);
  Tensor a = random({10, 10}, 1, device);
  f({a.slice(1, 1, 3)});
  EXPECT_THROW(f({a.slice(1, 2, 4)}), Error)
      << "a view at another offset must not reuse the kernel";
  Jit g([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.0}; });
  for (int64_t i = 1; i < 5; ++i) {
    Tensor v = a.slice(1, i, i + 2);
    std::vector<float> want = host(v);
    for (float& x : want) x += 1;
    ASSERT_TRUE(near(host(g({v})[0]), want)) << "offset " << i;
  }
}

TEST_P(JitSuite, ViewsOfNewBuffersAsInputs) {
  Jit f([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].mul(in[1]).add(in[2])};
  });
  for (int i = 0; i < 5; ++i) {
    Tensor a = random({6, 8}, 500 + i, device).t();                            // transposed
    Tensor b = random({8, 12}, 600 + i, device).slice(1, 0, std::nullopt, 2);  // strided
    Tensor c = random({8}, 700 + i, device).reshape({8, 1}).expand({8, 6});    // broadcast
    auto x = host(a), y = host(b), z = host(c);
    std::vector<float> want(x.size());
    for (size_t k = 0; k < x.size(); ++k) want[k] = x[k] * y[k] + z[k];
    ASSERT_TRUE(near(host(f({a, b, c})[0]), want)) << "call " << i;
  }
  expect_replays(f, 5, 1);
}

TEST_P(JitSuite, ConstantsAsInputs) {
  Jit g([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1] + in[2]}; });
  for (int i = 0; i < 5; ++i) {
    Tensor x = Tensor::from_vector<float>({float(i), float(i), float(i)}, {3}, DType::kF32, device);
    auto out = host(
        g({x, Tensor::ones({3}, DType::kF32, device), Tensor::zeros({3}, DType::kF32, device)})[0]);
    ASSERT_TRUE(near(out, {i + 1.0f, i + 1.0f, i + 1.0f})) << "call " << i;
  }
  expect_replays(g, 5, 1);
}

TEST_P(JitSuite, SizeOneInputIsNotFrozen) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; });
  Tensor a = Tensor::from_vector<float>({1, 2, 3}, {3}, DType::kF32, device);
  for (int i = 0; i < 5; ++i) {
    Tensor b = Tensor::from_vector<float>({float(i)}, {1}, DType::kF32, device);
    ASSERT_TRUE(near(host(f({a, b})[0]), {1.0f + i, 2.0f + i, 3.0f + i})) << "call " << i;
  }
}

TEST_P(JitSuite, DataUploadedInsideTheFunction) {
  Jit f([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] +
                               Tensor::from_vector<float>({1, 2, 3}, {3}, DType::kF32, device)};
  });
  for (int i = 0; i < 5; ++i) {
    Tensor b = random({3}, 800 + i, device);
    auto x = host(b);
    ASSERT_TRUE(near(host(f({b})[0]), {x[0] + 1, x[1] + 2, x[2] + 3})) << "call " << i;
  }
}

TEST_P(JitSuite, CapturedWeightsAndSeveralKernels) {
  Tensor w = random({16, 24}, 1, device), bias = random({16}, 2, device);
  Jit f([&](const std::vector<Tensor>& in) {
    Tensor h = nn::linear(in[0], w, bias).relu();
    return std::vector<Tensor>{h.softmax(-1), h.sum({1})};
  });
  for (int i = 0; i < 5; ++i) {
    Tensor x = random({5, 24}, 900 + i, device);
    auto out = f({x});
    // The same function, un-jitted, on the CPU.
    Tensor hc = nn::linear(x.to("cpu"), w.to("cpu"), bias.to("cpu")).relu();
    ASSERT_TRUE(near(host(out[0]), host(hc.softmax(-1)), 1e-4f)) << "call " << i;
    ASSERT_TRUE(near(host(out[1]), host(hc.sum({1})), 1e-4f)) << "call " << i;
  }
  expect_replays(f, 5, 1);
  if (records) {
    EXPECT_GE(f.captured_launches(), 4u);
  }
}

TEST_P(JitSuite, OutputsThatAreInputsOrViewsOfThem) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].t(), in[0] * 2.0}; });
  for (int i = 0; i < 4; ++i) {
    Tensor a = random({3, 5}, 1000 + i, device);
    auto out = f({a});
    ASSERT_EQ(out[0].shape(), (Shape{5, 3}));
    ASSERT_TRUE(near(host(out[0]), host(a.t())));
    std::vector<float> twice = host(a);
    for (float& v : twice) v *= 2;
    ASSERT_TRUE(near(host(out[1]), twice));
  }
}

TEST_P(JitSuite, DuplicateInputsAreAnError) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; });
  Tensor a = random({4}, 3, device);
  EXPECT_THROW(f({a, a}), Error);
  EXPECT_THROW(f({a, a.reshape({2, 2}).reshape({4})}), Error) << "a view of the same buffer";
}

TEST_P(JitSuite, ArityAndDeviceErrors) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 3.0}; });
  f({random({4}, 1, device)});
  EXPECT_THROW(f({random({4}, 2, device), random({4}, 3, device)}), Error);
  EXPECT_THROW(f({Tensor()}), Error);
  JitOptions few;
  few.max_captures = 2;
  Jit g([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 3.0}; }, few);
  g({random({1}, 1, device)});
  g({random({2}, 1, device)});
  EXPECT_THROW(g({random({3}, 1, device)}), Error);
}

TEST_P(JitSuite, ReadingDataWhileCapturingIsAnError) {
  if (!records) GTEST_SKIP() << "the '" << device << "' backend does not record";
  Jit f([](const std::vector<Tensor>& in) {
    const float s = in[0].sum().item<float>();
    return std::vector<Tensor>{in[0] * s};
  });
  f({random({4}, 1, device)});
  try {
    f({random({4}, 2, device)});
    ADD_FAILURE() << "capturing a function that calls item() did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("read tensor data"), std::string::npos) << e.what();
  }
}

TEST_P(JitSuite, JitInsideJit) {
  Jit inner([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.0}; });
  Jit outer(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{inner({in[0]})[0] * 3.0}; });
  for (int i = 0; i < 5; ++i) {
    Tensor a = Tensor::from_vector<float>({float(i), float(i)}, {2}, DType::kF32, device);
    ASSERT_TRUE(near(host(outer({a})[0]), {3.0f * (i + 1), 3.0f * (i + 1)})) << "call " << i;
  }
}

TEST_P(JitSuite, LongChainOfRealizedSteps) {
  Jit f([](const std::vector<Tensor>& in) {
    Tensor a = in[0];
    for (int i = 0; i < 80; ++i) a = (a + in[1]).realize();
    return std::vector<Tensor>{(a * in[2]).realize()};
  });
  Tensor a = random({10, 10}, 1, device), b = random({10, 10}, 2, device),
         c = random({10, 10}, 3, device);
  auto x = host(a), y = host(b), z = host(c);
  std::vector<float> want(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    float v = x[k];
    for (int i = 0; i < 80; ++i) v += y[k];
    want[k] = v * z[k];
  }
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(near(host(f({a, b, c})[0]), want, 1e-4f)) << "call " << i;
  if (records) {
    EXPECT_EQ(f.captured_launches(), 81u);
  }
}

TEST_P(JitSuite, AThousandCapturedFunctionsAlive) {
  // Each function closes over its own weight buffer (one shared kernel source).
  const int kCount = 1000;
  std::vector<Tensor> weights;
  std::vector<Jit> jits;
  weights.reserve(kCount);
  jits.reserve(kCount);
  for (int k = 0; k < kCount; ++k) {
    weights.push_back(
        Tensor::from_vector<float>(std::vector<float>(4, float(k)), {4}, DType::kF32, device));
    Tensor w = weights.back();
    jits.emplace_back(
        [w](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + w}; });
  }
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4}, DType::kF32, device);
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < kCount; ++k) (void)jits[k]({x});  // run, then capture
  }
  for (int k = 0; k < kCount; ++k) {
    Tensor y = Tensor::from_vector<float>({1, 2, 3, 4 + float(k)}, {4}, DType::kF32, device);
    auto got = host(jits[k]({y})[0]);
    ASSERT_TRUE(near(got, {1.0f + k, 2.0f + k, 3.0f + k, 4.0f + 2 * k})) << "function " << k;
  }
  if (records) {
    for (int k = 0; k < kCount; ++k) ASSERT_EQ(jits[k].replays(), 1u) << k;
  }
}

TEST_P(JitSuite, ResetForgetsCaptures) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[0]}; });
  for (int i = 0; i < 3; ++i) f({random({3}, i, device)});
  f.reset();
  EXPECT_EQ(f.captures(), 0u);
  Tensor a = random({3}, 9, device);
  auto x = host(a);
  ASSERT_TRUE(near(host(f({a})[0]), {x[0] * x[0], x[1] * x[1], x[2] * x[2]}));
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(JitSuite);

}  // namespace nvhcq::tensor
