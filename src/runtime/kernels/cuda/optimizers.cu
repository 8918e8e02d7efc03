// Fused multi-tensor optimizer updates. One launch walks the concatenation of all tensors of a
// node (up to kTensorsPerLaunch) in packs of kVec elements: each thread finds its tensor by
// advancing through the table's prefix sums, which grid-stride order keeps monotonic. Every
// operation is an explicitly rounded intrinsic (__fmul_rn, ...), so nvcc cannot contract a
// multiply and an add into an FMA and the results equal the CPU kernels' bit for bit.

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/cuda/device_types.cuh"
#include "runtime/kernels/cuda/optimizer_launch.h"

namespace zerograph::runtime::cuda {
namespace {

// One launch's tensors: ends[i] is the end (exclusive) of tensor i in the concatenation.
struct TensorTable {
  int count;
  int64_t ends[kTensorsPerLaunch];
  const void* in[4][kTensorsPerLaunch];
  void* out[3][kTensorsPerLaunch];
};
static_assert(sizeof(TensorTable) < 4000, "the table must fit the 4 KiB parameter limit");

__device__ __forceinline__ float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float Add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float Sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float Div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float Sqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double Mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double Add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double Sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double Div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double Sqrt(double a) { return __dsqrt_rn(a); }

// Each update reads kInputs values per element (X, G, states) and writes kOutputs (X', states),
// in the arithmetic type A.

struct AdamWUpdate {
  static constexpr int kInputs = 4;
  static constexpr int kOutputs = 3;
  AdamWCoefficients c;
  __device__ void operator()(const float (&in)[4], float (&out)[3]) const {
    const float g = in[1];
    const float m = Add(Mul(c.b1, in[2]), Mul(c.one_minus_b1, g));
    const float v = Add(Mul(c.b2, in[3]), Mul(c.one_minus_b2, Mul(g, g)));
    const float denom = Add(Mul(Sqrt(v), c.inv_sqrt_bc2), c.eps);
    out[0] = Mul(Sub(Mul(in[0], c.pre_decay), Div(Mul(c.step_size, m), denom)), c.post_decay);
    out[1] = m;
    out[2] = v;
  }
};

struct SgdUpdate {
  static constexpr int kInputs = 2;
  static constexpr int kOutputs = 1;
  float lr;
  __device__ void operator()(const float (&in)[4], float (&out)[3]) const {
    out[0] = Sub(in[0], Mul(lr, in[1]));
  }
};

// ONNX's updates compute in the tensor's type T with the scalars rounded to T, as the CPU does.
template <typename T>
struct OnnxAdamUpdate {
  static constexpr int kInputs = 4;
  static constexpr int kOutputs = 3;
  OnnxAdamScalars s;
  __device__ void operator()(const T (&in)[4], T (&out)[3]) const {
    const T x = in[0];
    const T gr = Add(Mul(T(s.norm), x), in[1]);
    const T v = Add(Mul(T(s.alpha), in[2]), Mul(T(s.one_minus_alpha), gr));
    const T h = Add(Mul(T(s.beta), in[3]), Mul(T(s.one_minus_beta), Mul(gr, gr)));
    const T h_sqrt = Add(Sqrt(h), T(s.epsilon));
    out[0] = Mul(T(s.post), Sub(x, Mul(T(s.ra), Div(v, h_sqrt))));
    out[1] = v;
    out[2] = h;
  }
};

template <typename T>
struct OnnxMomentumUpdate {
  static constexpr int kInputs = 3;
  static constexpr int kOutputs = 2;
  OnnxMomentumScalars s;
  __device__ void operator()(const T (&in)[4], T (&out)[3]) const {
    const T x = in[0];
    const T gr = Add(Mul(T(s.norm), x), in[1]);
    const T v = Add(Mul(T(s.alpha), in[2]), Mul(T(s.beta), gr));
    out[0] = s.nesterov ? Sub(x, Mul(T(s.rate), Add(gr, Mul(T(s.alpha), v))))
                        : Sub(x, Mul(T(s.rate), v));
    out[1] = v;
  }
};

template <typename T>
struct OnnxAdagradUpdate {
  static constexpr int kInputs = 3;
  static constexpr int kOutputs = 2;
  OnnxAdagradScalars s;
  __device__ void operator()(const T (&in)[4], T (&out)[3]) const {
    const T x = in[0];
    const T gr = Add(Mul(T(s.norm), x), in[1]);
    const T h = Add(in[2], Mul(gr, gr));
    out[0] = Sub(x, Div(Mul(T(s.rate), gr), Add(Sqrt(h), T(s.epsilon))));
    out[1] = h;
  }
};

// The input each output continues: X' is X's (input 0), state k's is input k + 1 (after G).
__device__ __forceinline__ int InputOf(int output) { return output == 0 ? 0 : output + 1; }

// `control` (null for ONNX's ops) scales the gradient, in[1], and may skip the update.
template <typename T, int kVec, typename Update>
__global__ void MultiTensorKernel(TensorTable table, int64_t total_packs, Update update,
                                  const float* control) {
  using A = Arith<T>;
  using P = Pack<T, kVec>;
  int64_t p = GlobalThread();
  if (p >= total_packs) return;
  const float grad_scale = control != nullptr ? control[0] : 1.0f;
  const bool skip = control != nullptr && control[1] != 0.0f;
  // The first tensor this thread touches, by binary search; later ones by walking forward.
  int t = 0;
  for (int hi = table.count - 1; t <= hi;) {
    const int mid = (t + hi) / 2;
    if (table.ends[mid] <= p) {
      t = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  for (; p < total_packs; p += GridThreads()) {
    while (table.ends[t] <= p) ++t;
    const int64_t local = p - (t == 0 ? 0 : table.ends[t - 1]);
    if (skip) {
#pragma unroll
      for (int k = 0; k < Update::kOutputs; ++k) {
        const P* from = static_cast<const P*>(table.in[InputOf(k)][t]);
        P* to = static_cast<P*>(table.out[k][t]);
        if (to != from) to[local] = from[local];
      }
      continue;
    }
    P in[Update::kInputs];
#pragma unroll
    for (int k = 0; k < Update::kInputs; ++k) in[k] = static_cast<const P*>(table.in[k][t])[local];
    P out[Update::kOutputs];
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      A values[4] = {};
      A results[3];
#pragma unroll
      for (int k = 0; k < Update::kInputs; ++k) values[k] = Load(in[k].v[j]);
      if (control != nullptr) values[1] = Mul(values[1], A(grad_scale));
      update(values, results);
#pragma unroll
      for (int k = 0; k < Update::kOutputs; ++k) out[k].v[j] = Store<T>(results[k]);
    }
#pragma unroll
    for (int k = 0; k < Update::kOutputs; ++k) static_cast<P*>(table.out[k][t])[local] = out[k];
  }
}

// kVec elements per access when every tensor's length and every pointer allow it.
template <typename T, typename Update>
bool Vectorizable(const UpdateTensors* tensors, size_t count, int vec) {
  const size_t bytes = sizeof(T) * static_cast<size_t>(vec);
  for (size_t i = 0; i < count; ++i) {
    if (tensors[i].numel % vec != 0) return false;
    for (int k = 0; k < Update::kInputs; ++k) {
      if (reinterpret_cast<uintptr_t>(tensors[i].in[k]) % bytes != 0) return false;
    }
    for (int k = 0; k < Update::kOutputs; ++k) {
      if (reinterpret_cast<uintptr_t>(tensors[i].out[k]) % bytes != 0) return false;
    }
  }
  return true;
}

template <typename T, int kVec, typename Update>
cudaError_t LaunchChunk(const UpdateTensors* tensors, size_t count, const Update& update,
                        const float* control, cudaStream_t stream) {
  TensorTable table{};
  table.count = static_cast<int>(count);
  int64_t packs = 0;
  for (size_t i = 0; i < count; ++i) {
    packs += tensors[i].numel / kVec;
    table.ends[i] = packs;
    for (int k = 0; k < 4; ++k) table.in[k][i] = tensors[i].in[k];
    for (int k = 0; k < 3; ++k) table.out[k][i] = tensors[i].out[k];
  }
  if (packs == 0) return cudaSuccess;
  MultiTensorKernel<T, kVec, Update>
      <<<GridFor(packs), kBlock, 0, stream>>>(table, packs, update, control);
  return cudaGetLastError();
}

template <typename T, typename Update>
cudaError_t RunUpdate(const UpdateTensors* tensors, size_t count, const Update& update,
                      const float* control, cudaStream_t stream) {
  constexpr int kWidth = static_cast<int>(16 / sizeof(T));
  for (size_t first = 0; first < count; first += kTensorsPerLaunch) {
    const size_t chunk = std::min<size_t>(kTensorsPerLaunch, count - first);
    const UpdateTensors* part = tensors + first;
    const cudaError_t result = Vectorizable<T, Update>(part, chunk, kWidth)
                                   ? LaunchChunk<T, kWidth>(part, chunk, update, control, stream)
                                   : LaunchChunk<T, 1>(part, chunk, update, control, stream);
    if (result != cudaSuccess) return result;
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t LaunchAdamW(DataType dtype, const AdamWCoefficients& c, const float* control,
                        const UpdateTensors* tensors, size_t count, cudaStream_t stream) {
  return DispatchDtype<float, __half, __nv_bfloat16>(dtype, [&](auto tag) {
    return RunUpdate<decltype(tag)>(tensors, count, AdamWUpdate{c}, control, stream);
  });
}

cudaError_t LaunchSgd(DataType dtype, float lr, const float* control, const UpdateTensors* tensors,
                      size_t count, cudaStream_t stream) {
  return DispatchDtype<float, __half, __nv_bfloat16>(dtype, [&](auto tag) {
    return RunUpdate<decltype(tag)>(tensors, count, SgdUpdate{lr}, control, stream);
  });
}

cudaError_t LaunchOnnxAdam(DataType dtype, const OnnxAdamScalars& s, const UpdateTensors* tensors,
                           size_t count, cudaStream_t stream) {
  return DispatchDtype<float, double>(dtype, [&](auto tag) {
    using T = decltype(tag);
    return RunUpdate<T>(tensors, count, OnnxAdamUpdate<T>{s}, nullptr, stream);
  });
}

cudaError_t LaunchOnnxMomentum(DataType dtype, const OnnxMomentumScalars& s,
                               const UpdateTensors* tensors, size_t count, cudaStream_t stream) {
  return DispatchDtype<float, double>(dtype, [&](auto tag) {
    using T = decltype(tag);
    return RunUpdate<T>(tensors, count, OnnxMomentumUpdate<T>{s}, nullptr, stream);
  });
}

cudaError_t LaunchOnnxAdagrad(DataType dtype, const OnnxAdagradScalars& s,
                              const UpdateTensors* tensors, size_t count, cudaStream_t stream) {
  return DispatchDtype<float, double>(dtype, [&](auto tag) {
    using T = decltype(tag);
    return RunUpdate<T>(tensors, count, OnnxAdagradUpdate<T>{s}, nullptr, stream);
  });
}

}  // namespace zerograph::runtime::cuda
