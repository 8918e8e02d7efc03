#include "zerograph/runtime/device_tensor.h"

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/runtime/device.h"

namespace zerograph::runtime {
namespace {

class DeviceTensorTest : public ::testing::Test {
 protected:
  std::unique_ptr<Device> device_ = CreateCpuDevice();
};

// A new tensor is contiguous, row-major, and owns a buffer of exactly its bytes.
TEST_F(DeviceTensorTest, AllocateMakesContiguousRowMajorTensor) {
  DeviceTensor t = *DeviceTensor::Allocate(*device_, DataType::kFloat32, {2, 3, 4});
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.byte_size(), 96u);
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.buffer()->size(), 96u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  EXPECT_EQ(t.ToString(), "float[2,3,4]");
}

// A view at an element offset of a 1-D fused buffer shares its memory and reshapes it: how a
// parameter lives inside a bucket.
TEST_F(DeviceTensorTest, ViewOfFusedBufferSharesMemory) {
  DeviceTensor fused = *DeviceTensor::Allocate(*device_, DataType::kFloat32, {64});
  float* base = fused.data_as<float>();
  std::iota(base, base + 64, 0.0f);
  DeviceTensor w = *fused.View(16, {4, 8});
  EXPECT_EQ(w.data_as<float>(), base + 16);
  EXPECT_EQ(w.shape(), (Shape{4, 8}));
  EXPECT_EQ(w.data_as<float>()[9], 25.0f);
  EXPECT_EQ(w.buffer(), fused.buffer());
  // The view keeps the buffer alive after the fused tensor goes.
  fused = DeviceTensor();
  EXPECT_EQ(w.data_as<float>()[0], 16.0f);
}

// Views and reshapes that do not fit are refused, at the boundary exactly.
TEST_F(DeviceTensorTest, ViewPastTheEndIsRefused) {
  DeviceTensor fused = *DeviceTensor::Allocate(*device_, DataType::kFloat16, {64});
  EXPECT_TRUE(fused.View(32, {32}).ok());
  EXPECT_FALSE(fused.View(33, {32}).ok());
  EXPECT_FALSE(fused.View(-1, {1}).ok());
  EXPECT_TRUE(fused.Reshape({8, 8}).ok());
  EXPECT_FALSE(fused.Reshape({8, 9}).ok());
}

// A slice of the outer axis stays contiguous; a slice of an inner axis is strided and cannot be
// viewed further.
TEST_F(DeviceTensorTest, SliceOfInnerAxisIsStrided) {
  DeviceTensor t = *DeviceTensor::Allocate(*device_, DataType::kInt64, {4, 6});
  DeviceTensor rows = *t.Slice(0, 1, 3);
  EXPECT_TRUE(rows.is_contiguous());
  EXPECT_EQ(rows.data_as<int64_t>(), t.data_as<int64_t>() + 6);
  DeviceTensor cols = *t.Slice(1, 2, 4);
  EXPECT_FALSE(cols.is_contiguous());
  EXPECT_EQ(cols.shape(), (Shape{4, 2}));
  EXPECT_EQ(cols.strides(), (Shape{6, 1}));
  EXPECT_FALSE(cols.View(0, {8}).ok());
  EXPECT_FALSE(t.Slice(1, 4, 7).ok());
}

// A tensor over an existing buffer must fit in it.
TEST_F(DeviceTensorTest, CreateChecksTheBufferBounds) {
  std::shared_ptr<Buffer> buffer = *device_->Allocate(40);
  EXPECT_TRUE(DeviceTensor::Create(buffer, 8, DataType::kFloat32, {8}).ok());
  EXPECT_FALSE(DeviceTensor::Create(buffer, 12, DataType::kFloat32, {8}).ok());
  EXPECT_FALSE(DeviceTensor::Create(buffer, 0, DataType::kString, {1}).ok());
}

// The device counts live and peak bytes, so the executor can report its peak.
TEST_F(DeviceTensorTest, DeviceTracksLiveAndPeakBytes) {
  {
    DeviceTensor a = *DeviceTensor::Allocate(*device_, DataType::kFloat32, {256});
    DeviceTensor b = *DeviceTensor::Allocate(*device_, DataType::kFloat32, {256});
    EXPECT_EQ(device_->allocated_bytes(), 2048u);
  }
  EXPECT_EQ(device_->allocated_bytes(), 0u);
  EXPECT_EQ(device_->peak_allocated_bytes(), 2048u);
}

// Host copies check sizes and copy exactly.
TEST_F(DeviceTensorTest, HostCopiesRoundTrip) {
  DeviceTensor t = *DeviceTensor::Allocate(*device_, DataType::kInt32, {3});
  const int32_t in[3] = {1, -2, 3};
  int32_t out[3] = {};
  ASSERT_TRUE(device_->CopyFromHost(std::as_bytes(std::span(in)), t).ok());
  ASSERT_TRUE(device_->CopyToHost(t, std::as_writable_bytes(std::span(out))).ok());
  EXPECT_EQ(out[1], -2);
  EXPECT_FALSE(device_->CopyFromHost(std::as_bytes(std::span(in).first(2)), t).ok());
}

}  // namespace
}  // namespace zerograph::runtime
