#include <cstring>
#include <memory>

#include "zerograph/runtime/communicator.h"

namespace zerograph::runtime {
namespace {

// One rank: a collective of one is a copy (the sum and the average of one value are the value).
class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator() : Communicator(/*rank=*/0, /*size=*/1) {}
  DeviceType device_type() const override { return DeviceType::kCpu; }
  std::string_view backend_name() const override { return "local"; }

 protected:
  Status ReduceScatterImpl(const void* send, void* recv, size_t count, DataType dtype, ReduceOp,
                           Stream&) override {
    return Copy(send, recv, count, dtype);
  }
  Status AllGatherImpl(const void* send, void* recv, size_t count, DataType dtype,
                       Stream&) override {
    return Copy(send, recv, count, dtype);
  }
  Status AllReduceImpl(const void* send, void* recv, size_t count, DataType dtype, ReduceOp,
                       Stream&) override {
    return Copy(send, recv, count, dtype);
  }
  Status BroadcastImpl(void*, size_t, DataType, int, Stream&) override { return Status::Ok(); }
  Status BarrierImpl() override { return Status::Ok(); }

 private:
  static Status Copy(const void* send, void* recv, size_t count, DataType dtype) {
    if (send != recv) std::memcpy(recv, send, count * ElementSize(dtype));
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Communicator> CreateLocalCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

}  // namespace zerograph::runtime
