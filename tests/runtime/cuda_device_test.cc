#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/cuda_test_util.h"
#include "zerograph/runtime/cuda.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/stream.h"

#if ZG_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace zerograph::runtime {
namespace {

std::vector<float> Iota(size_t n, float start) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), start);
  return values;
}

template <typename T>
std::span<const std::byte> Bytes(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}
template <typename T>
std::span<std::byte> MutableBytes(std::vector<T>& v) {
  return std::as_writable_bytes(std::span<T>(v));
}

// Counting GPUs never fails and prints nothing, GPU or not: graph-exec asks it to pick a default.
TEST(CudaAvailabilityTest, DeviceCountIsQuietAndNeverNegative) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int count = CudaDeviceCount();
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_GE(count, 0);
  if (!CudaBackendBuilt()) {
    EXPECT_EQ(count, 0);
  }
}

// A GPU that is not there is refused with a status naming it (Unimplemented without the backend).
TEST(CudaAvailabilityTest, MissingGpuIsRefused) {
  const int count = CudaDeviceCount();
  StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(count);
  ASSERT_FALSE(device.ok());
  if (CudaBackendBuilt()) {
    EXPECT_EQ(device.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(device.status().message().find("cuda:" + std::to_string(count) + " does not exist"),
              std::string::npos)
        << device.status().ToString();
  } else {
    EXPECT_EQ(device.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(device.status().message().find("no CUDA backend"), std::string::npos);
  }
}

// Its pair: the last GPU there is opens (only where there is one).
TEST(CudaAvailabilityTest, LastGpuOpens) {
  ZG_SKIP_WITHOUT_GPU();
  StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(CudaDeviceCount() - 1);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_EQ((*device)->type(), DeviceType::kCuda);
  EXPECT_FALSE((*device)->host_accessible());
}

// Not launched by MPI, the job is one rank on its machine; the NCCL communicator wants a GPU.
TEST(CudaAvailabilityTest, OneRankWithoutLauncherAndNcclNeedsCudaDevice) {
  if (!CudaBackendBuilt()) {
    EXPECT_EQ(JobRanks::Discover().status().code(), StatusCode::kUnimplemented);
    return;
  }
  if (LaunchedByMpi()) GTEST_SKIP() << "launched by MPI: the job has its launcher's ranks";
  StatusOr<std::unique_ptr<JobRanks>> ranks = JobRanks::Discover();
  ASSERT_TRUE(ranks.ok()) << ranks.status().ToString();
  EXPECT_EQ((*ranks)->rank(), 0);
  EXPECT_EQ((*ranks)->size(), 1);
  EXPECT_EQ((*ranks)->local_rank(), 0);
  EXPECT_EQ((*ranks)->local_size(), 1);
  std::unique_ptr<Device> cpu = CreateCpuDevice();
  StatusOr<std::unique_ptr<Communicator>> comm = CreateNcclCommunicator(*cpu, **ranks);
  ASSERT_FALSE(comm.ok());
  EXPECT_NE(comm.status().message().find("needs a CUDA device"), std::string::npos)
      << comm.status().ToString();
}

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ZG_SKIP_WITHOUT_GPU();
    StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(0);
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = std::move(device).value();
  }

  DeviceTensor Allocate(int64_t n) {
    StatusOr<DeviceTensor> t = DeviceTensor::Allocate(*device_, DataType::kFloat32, {n});
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : DeviceTensor();
  }

  std::unique_ptr<Stream> NewStream(std::string_view name) {
    StatusOr<std::unique_ptr<Stream>> stream = device_->CreateStream(name);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    return stream.ok() ? std::move(stream).value() : nullptr;
  }

  std::unique_ptr<Device> device_;
};

// Synchronous copies there and back keep every byte; the device is cuda:0 and not host memory.
TEST_F(CudaDeviceTest, CopiesRoundTrip) {
  EXPECT_EQ(device_->name(), "cuda:0");
  EXPECT_FALSE(device_->host_accessible());
  const std::vector<float> in = Iota(1000, -3.5f);
  DeviceTensor t = Allocate(1000);
  ASSERT_TRUE(device_->CopyFromHost(Bytes(in), t).ok());
  std::vector<float> out(1000, 0.0f);
  ASSERT_TRUE(device_->CopyToHost(t, MutableBytes(out)).ok());
  EXPECT_EQ(out, in);
}

// Copies in stream order from and to pageable memory, staged (small) and synchronous (larger than
// the staging limit), and from pinned memory, all arrive.
TEST_F(CudaDeviceTest, AsyncCopiesArriveInStreamOrder) {
  std::unique_ptr<Stream> stream = NewStream("copies");
  for (size_t n : {size_t{1}, size_t{4096}, size_t{5} << 20}) {  // 4 B, 16 KiB, 20 MiB
    const std::vector<float> in = Iota(n, 1.0f);
    DeviceTensor t = Allocate(static_cast<int64_t>(n));
    std::vector<float> out(n, 0.0f);
    ASSERT_TRUE(device_->CopyFromHostAsync(Bytes(in), t, *stream).ok());
    ASSERT_TRUE(device_->CopyToHostAsync(t, MutableBytes(out), *stream).ok());
    ASSERT_TRUE(stream->Synchronize().ok());
    EXPECT_EQ(out, in) << n << " elements";
  }
#if ZG_WITH_CUDA
  float* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 256 * sizeof(float)), cudaSuccess);
  std::iota(pinned, pinned + 256, 7.0f);
  DeviceTensor t = Allocate(256);
  std::vector<float> out(256, 0.0f);
  ASSERT_TRUE(
      device_->CopyFromHostAsync(std::as_bytes(std::span<const float>(pinned, 256)), t, *stream)
          .ok());
  ASSERT_TRUE(device_->CopyToHostAsync(t, MutableBytes(out), *stream).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(out, std::vector<float>(pinned, pinned + 256));
  cudaFreeHost(pinned);
#endif
}

// An event joins two streams: the second copies what the first uploaded, only after it landed.
TEST_F(CudaDeviceTest, EventOrdersTwoStreams) {
  std::unique_ptr<Stream> producer = NewStream("producer");
  std::unique_ptr<Stream> consumer = NewStream("consumer");
  StatusOr<std::unique_ptr<Event>> event = device_->CreateEvent();
  ASSERT_TRUE(event.ok());
  EXPECT_TRUE((*event)->IsComplete());  // never recorded
  const size_t n = size_t{1} << 20;
  const std::vector<float> in = Iota(n, 0.5f);
  DeviceTensor a = Allocate(static_cast<int64_t>(n));
  DeviceTensor b = Allocate(static_cast<int64_t>(n));
  ASSERT_TRUE(device_->CopyFromHostAsync(Bytes(in), a, *producer).ok());
  ASSERT_TRUE(producer->RecordEvent(**event).ok());
  ASSERT_TRUE(consumer->WaitEvent(**event).ok());
  ASSERT_TRUE(consumer->Enqueue([&] { return a.device().CopyAsync(a, b, *consumer); }).ok());
  std::vector<float> out(n, 0.0f);
  ASSERT_TRUE(device_->CopyToHostAsync(b, MutableBytes(out), *consumer).ok());
  ASSERT_TRUE(consumer->Synchronize().ok());
  ASSERT_TRUE((*event)->Synchronize().ok());
  EXPECT_TRUE((*event)->IsComplete());
  EXPECT_EQ(out, in);
}

// A task runs at once on the calling thread; after one fails, later tasks are dropped, events
// still complete, and Synchronize keeps returning the first error.
TEST_F(CudaDeviceTest, TaskErrorsAreSticky) {
  std::unique_ptr<Stream> stream = NewStream("errors");
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  ASSERT_TRUE(stream
                  ->Enqueue([&] {
                    ran_on = std::this_thread::get_id();
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(ran_on, caller);
  ASSERT_TRUE(stream->Enqueue([] { return InternalError("first failure"); }).ok());
  bool later_ran = false;
  ASSERT_TRUE(stream
                  ->Enqueue([&] {
                    later_ran = true;
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_FALSE(later_ran);
  StatusOr<std::unique_ptr<Event>> event = device_->CreateEvent();
  ASSERT_TRUE(event.ok());
  ASSERT_TRUE(stream->RecordEvent(**event).ok());
  EXPECT_TRUE((*event)->Synchronize().ok());
  for (int i = 0; i < 2; ++i) {
    Status status = stream->Synchronize();
    EXPECT_EQ(status.code(), StatusCode::kInternal);
    EXPECT_NE(status.message().find("first failure"), std::string::npos);
  }
}

#if ZG_WITH_CUDA
// Blocks `stream` until `release` is set, from a host function (the GPU's queue waits for it).
void HoldStream(Stream& stream, std::atomic<bool>& release) {
  cudaLaunchHostFunc(
      static_cast<cudaStream_t>(stream.native_handle()),
      [](void* flag) {
        while (!static_cast<std::atomic<bool>*>(flag)->load()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      },
      &release);
}

// A freed block is not handed out again while a stream may still use it, and is once the stream
// has passed the point of the free; live bytes are counted exactly.
TEST_F(CudaDeviceTest, FreedMemoryIsReusedOnlyAfterStreamsPassTheFree) {
  std::unique_ptr<Stream> stream = NewStream("busy");
  const size_t bytes = size_t{3} << 20;
  void* first_address = nullptr;
  std::atomic<bool> release{false};
  {
    StatusOr<std::shared_ptr<Buffer>> first = device_->Allocate(bytes);
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(device_->allocated_bytes(), bytes);
    first_address = (*first)->data();
    HoldStream(*stream, release);
  }  // freed while the stream is held
  EXPECT_EQ(device_->allocated_bytes(), 0u);
  StatusOr<std::shared_ptr<Buffer>> while_busy = device_->Allocate(bytes);
  ASSERT_TRUE(while_busy.ok());
  EXPECT_NE((*while_busy)->data(), first_address);
  release = true;
  ASSERT_TRUE(stream->Synchronize().ok());
  StatusOr<std::shared_ptr<Buffer>> after = device_->Allocate(bytes);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)->data(), first_address);
}
#endif

}  // namespace
}  // namespace zerograph::runtime
