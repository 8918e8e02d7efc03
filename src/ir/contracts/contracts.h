#ifndef ZEROGRAPH_SRC_IR_CONTRACTS_CONTRACTS_H_
#define ZEROGRAPH_SRC_IR_CONTRACTS_CONTRACTS_H_

// The op contracts, one list per domain, and the dtype sets they share. Adding an op: its
// contract in the list of its domain (standard ops by ONNX's schema, ours by docs/formats.md),
// with a shape function from shape_functions.h or its own.

#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::contracts {

using enum DataType;
using enum OpFormal::Arity;

// ONNX's type-constraint sets, spelled as its schemas spell them.
inline constexpr DataType kFloatTypes[] = {kFloat16, kFloat32, kFloat64, kBFloat16};
// The IEEE formats only (no bfloat16): Sin and the other trigonometric ops.
inline constexpr DataType kIeeeFloatTypes[] = {kFloat16, kFloat32, kFloat64};
inline constexpr DataType kNumericTypes[] = {kUint8,   kUint16,  kUint32,  kUint64,
                                             kInt8,    kInt16,   kInt32,   kInt64,
                                             kFloat16, kFloat32, kFloat64, kBFloat16};
// Signed numbers: Relu, Neg.
inline constexpr DataType kSignedTypes[] = {kInt8,    kInt16,   kInt32,   kInt64,
                                            kFloat16, kFloat32, kFloat64, kBFloat16};
// MatMul, Gemm, the reductions.
inline constexpr DataType kMatMulTypes[] = {kUint32,  kUint64,  kInt32,   kInt64,
                                            kFloat16, kFloat32, kFloat64, kBFloat16};
// The reductions (and Gemm) before opset 13, which added bfloat16.
inline constexpr DataType kReduceTypesBefore13[] = {kUint32,  kUint64,  kInt32,  kInt64,
                                                    kFloat16, kFloat32, kFloat64};
// Every fixed-size dtype: data movement (Identity, Reshape, Transpose, Cast, our fused buffers).
inline constexpr DataType kAllTypes[] = {kFloat32, kFloat16, kBFloat16, kFloat64, kInt64,
                                         kInt32,   kInt8,    kUint8,    kBool,    kInt16,
                                         kUint16,  kUint32,  kUint64};
inline constexpr DataType kBoolType[] = {kBool};
// Equal: the numbers and bool.
inline constexpr DataType kEqualityTypes[] = {kUint8,   kUint16,   kUint32, kUint64,  kInt8,
                                              kInt16,   kInt32,    kInt64,  kFloat16, kFloat32,
                                              kFloat64, kBFloat16, kBool};
// Pow's base.
inline constexpr DataType kPowBaseTypes[] = {kInt32,   kInt64,   kFloat16,
                                             kFloat32, kFloat64, kBFloat16};
inline constexpr DataType kInt64Type[] = {kInt64};
inline constexpr DataType kFloat32Type[] = {kFloat32};
inline constexpr DataType kIndexTypes[] = {kInt32, kInt64};

Status AddStandardContracts(OpContracts& contracts);
Status AddDataMovementContracts(OpContracts& contracts);
Status AddTrainingContracts(OpContracts& contracts);
Status AddZerographContracts(OpContracts& contracts);
// Reductions, ArgMax/ArgMin, softmax and normalization (reduction_contracts.cc).
Status AddReductionContracts(OpContracts& contracts);
Status AddMicrosoftElementwiseContracts(OpContracts& contracts);
// Losses, Dropout, FusedMatMul, the gradient accumulator (ONNX's and com.microsoft's).
Status AddLossMatMulContracts(OpContracts& contracts);

}  // namespace zerograph::contracts

#endif  // ZEROGRAPH_SRC_IR_CONTRACTS_CONTRACTS_H_
