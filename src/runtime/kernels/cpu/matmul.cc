// Matrix products through BLAS: ONNX MatMul (numpy matmul: 1-D operands promoted, batch
// dimensions broadcast) and Gemm (Y = alpha·A'·B' + beta·C, C broadcast to [M, N]).

#include <cblas.h>

#include <array>
#include <climits>
#include <cstring>
#include <memory>

#include "runtime/kernels/cpu/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {
namespace {

// C[M,N] = alpha·op(A)·op(B) + beta·C, row-major, leading dimensions as stored.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

// BLAS takes int dimensions.
Status CheckBlasDims(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) {
    ZG_RETURN_IF_NOT(d <= INT_MAX, "dimension ", d, " exceeds BLAS's int range");
  }
  return Status::Ok();
}

// The shapes of a MatMul with 1-D operands promoted: a [..., M, K], b [..., K, N].
struct MatMulShapes {
  Shape a_batch, b_batch, out_batch;
  int64_t m = 1, k = 1, n = 1;
  Shape out;
};

StatusOr<MatMulShapes> MatMulShapesOf(const Shape& a, const Shape& b) {
  ZG_RETURN_IF_NOT(!a.empty() && !b.empty(), "MatMul of a scalar: ", ShapeToString(a), " x ",
                   ShapeToString(b));
  MatMulShapes s;
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  s.m = a_vector ? 1 : a[a.size() - 2];
  s.k = a.back();
  const int64_t kb = b_vector ? b[0] : b[b.size() - 2];
  s.n = b_vector ? 1 : b.back();
  ZG_RETURN_IF_NOT(s.k == kb, "MatMul inner dimensions differ: ", ShapeToString(a), " x ",
                   ShapeToString(b));
  if (!a_vector) s.a_batch.assign(a.begin(), a.end() - 2);
  if (!b_vector) s.b_batch.assign(b.begin(), b.end() - 2);
  ZG_ASSIGN_OR_RETURN(s.out_batch, BroadcastShapes(s.a_batch, s.b_batch));
  s.out = s.out_batch;
  if (!a_vector) s.out.push_back(s.m);
  if (!b_vector) s.out.push_back(s.n);
  return s;
}

template <typename T>
class MatMulKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    return MakeKernel<MatMulKernel>(info);
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 2, "expects 2 inputs, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* a, RequiredInput(ctx, 0));
    ZG_ASSIGN_OR_RETURN(const TensorSpec* b, RequiredInput(ctx, 1));
    ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes");
    ZG_ASSIGN_OR_RETURN(MatMulShapes s, MatMulShapesOf(a->shape, b->shape));
    ZG_RETURN_IF_ERROR(CheckBlasDims({s.m, s.n, s.k}));
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{a->dtype, s.out}}};
  }

  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    DeviceTensor& y = *ctx.outputs[0];
    ZG_ASSIGN_OR_RETURN(MatMulShapes s, MatMulShapesOf(a.shape(), b.shape()));
    const T* pa = a.data_as<const T>();
    const T* pb = b.data_as<const T>();
    T* py = y.data_as<T>();
    if (y.numel() == 0) return Status::Ok();
    if (s.k == 0) {  // an empty sum
      std::memset(py, 0, y.byte_size());
      return Status::Ok();
    }
    const int64_t a_matrix = s.m * s.k;
    const int64_t b_matrix = s.k * s.n;
    const int64_t y_matrix = s.m * s.n;
    // One B for every batch and A's batches laid out as the output's: one GEMM of all rows.
    if (NumElements(s.b_batch) == 1 && s.a_batch == s.out_batch) {
      Gemm(false, false, NumElements(s.out_batch) * s.m, s.n, s.k, T(1), pa, s.k, pb, s.n, T(0), py,
           s.n);
      return Status::Ok();
    }
    const std::array<std::span<const int64_t>, 2> batches = {s.a_batch, s.b_batch};
    const BroadcastPlan plan = PlanBroadcast(s.out_batch, batches);
    const int64_t sa = plan.strides[0].back();
    const int64_t sb = plan.strides[1].back();
    int64_t out_index = 0;
    ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t count) {
      for (int64_t i = 0; i < count; ++i, ++out_index) {
        Gemm(false, false, s.m, s.n, s.k, T(1), pa + (offsets[0] + i * sa) * a_matrix, s.k,
             pb + (offsets[1] + i * sb) * b_matrix, s.n, T(0), py + out_index * y_matrix, s.n);
      }
    });
    return Status::Ok();
  }
};

template <typename T>
class GemmKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(int64_t trans_a, IntAttr(*info.node, "transA", 0));
    ZG_ASSIGN_OR_RETURN(int64_t trans_b, IntAttr(*info.node, "transB", 0));
    ZG_ASSIGN_OR_RETURN(float alpha, FloatAttr(*info.node, "alpha", 1.0f));
    ZG_ASSIGN_OR_RETURN(float beta, FloatAttr(*info.node, "beta", 1.0f));
    return std::unique_ptr<OpKernel>(new GemmKernel(info, trans_a != 0, trans_b != 0, alpha, beta));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 2 || ctx.num_inputs() == 3, "expects 2 or 3 inputs, got ",
                     ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* a, RequiredInput(ctx, 0));
    ZG_ASSIGN_OR_RETURN(const TensorSpec* b, RequiredInput(ctx, 1));
    ZG_RETURN_IF_NOT(a->shape.size() == 2 && b->shape.size() == 2, "A and B must be 2-D, got ",
                     ShapeToString(a->shape), " and ", ShapeToString(b->shape));
    ZG_RETURN_IF_NOT(a->dtype == b->dtype, "inputs of different dtypes");
    const int64_t m = trans_a_ ? a->shape[1] : a->shape[0];
    const int64_t k = trans_a_ ? a->shape[0] : a->shape[1];
    const int64_t kb = trans_b_ ? b->shape[1] : b->shape[0];
    const int64_t n = trans_b_ ? b->shape[0] : b->shape[1];
    ZG_RETURN_IF_NOT(k == kb, "inner dimensions differ: A' is [", m, ",", k, "], B' is [", kb, ",",
                     n, "]");
    ZG_RETURN_IF_ERROR(CheckBlasDims({m, n, k}));
    const Shape out = {m, n};
    if (const TensorSpec* c = ctx.input(2)) {
      ZG_RETURN_IF_NOT(c->dtype == a->dtype, "C has another dtype");
      StatusOr<Shape> broadcast = BroadcastShapes(c->shape, out);
      ZG_RETURN_IF_NOT(broadcast.ok() && *broadcast == out, "C ", ShapeToString(c->shape),
                       " does not broadcast to [", m, ",", n, "]");
    }
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{a->dtype, out}}};
  }

  Status ComputeImpl(const KernelContext& ctx) const override {
    const DeviceTensor& a = *ctx.inputs[0];
    const DeviceTensor& b = *ctx.inputs[1];
    const DeviceTensor* c = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
    DeviceTensor& y = *ctx.outputs[0];
    const int64_t m = y.dim(0);
    const int64_t n = y.dim(1);
    const int64_t k = trans_a_ ? a.dim(0) : a.dim(1);
    T* py = y.data_as<T>();
    if (y.numel() == 0) return Status::Ok();
    // Y = beta·C first (broadcast), then the product is added with BLAS beta = 1.
    if (c != nullptr) {
      const T* pc = c->data_as<const T>();
      const T beta = static_cast<T>(beta_);
      const std::array<std::span<const int64_t>, 1> inputs = {c->shape()};
      const BroadcastPlan plan = PlanBroadcast(y.shape(), inputs);
      const int64_t sc = plan.strides[0].back();
      int64_t out_offset = 0;
      ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t count) {
        const T* src = pc + offsets[0];
        T* dst = py + out_offset;
        for (int64_t i = 0; i < count; ++i) dst[i] = beta * src[i * sc];
        out_offset += count;
      });
    } else {
      std::memset(py, 0, y.byte_size());
    }
    if (k == 0) return Status::Ok();
    Gemm(trans_a_, trans_b_, m, n, k, static_cast<T>(alpha_), a.data_as<const T>(), a.dim(1),
         b.data_as<const T>(), b.dim(1), T(1), py, n);
    return Status::Ok();
  }

 private:
  GemmKernel(const KernelInfo& info, bool trans_a, bool trans_b, float alpha, float beta)
      : OpKernel(info), trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha), beta_(beta) {}

  bool trans_a_;
  bool trans_b_;
  float alpha_;
  float beta_;
};

}  // namespace

Status RegisterCpuMatMulKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCpu = DeviceType::kCpu;
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "MatMul",
                                        kCpu,
                                        {kFloat32, kFloat64},
                                        0,
                                        {},
                                        MakeTypedKernel<MatMulKernel, kFloat32, kFloat64>}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Gemm",
                                        kCpu,
                                        {kFloat32, kFloat64},
                                        0,
                                        {},
                                        MakeTypedKernel<GemmKernel, kFloat32, kFloat64>}));
  return Status::Ok();
}

}  // namespace zerograph::runtime
