#include "zerograph/core/status.h"

#include <gtest/gtest.h>

namespace zerograph {
namespace {

StatusOr<int> ParsePositive(int x) {
  ZG_RETURN_IF_NOT(x > 0, "expected a positive number, got ", x);
  return x;
}

Status Doubled(int x, int* out) {
  ZG_ASSIGN_OR_RETURN(int value, ParsePositive(x));
  *out = 2 * value;
  return Status::Ok();
}

Status FailsInternally() {
  ZG_RET_CHECK(1 + 1 == 3, "arithmetic");
  return Status::Ok();
}

// OK is the default and maps to exit code 0.
TEST(StatusTest, OkIsDefault) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.ExitCode(), kExitOk);
  EXPECT_EQ(status.ToString(), "OK");
}

// Bad input maps to 2, our bugs and the machine to 3.
TEST(StatusTest, ExitCodes) {
  EXPECT_EQ(InvalidArgumentError("x").ExitCode(), kExitBadInput);
  EXPECT_EQ(NotFoundError("x").ExitCode(), kExitBadInput);
  EXPECT_EQ(DataLossError("x").ExitCode(), kExitBadInput);
  EXPECT_EQ(InternalError("x").ExitCode(), kExitRuntime);
  EXPECT_EQ(UnavailableError("x").ExitCode(), kExitRuntime);
  EXPECT_EQ(UnimplementedError("x").ExitCode(), kExitRuntime);
}

// Context goes in front of the message and keeps the code.
TEST(StatusTest, WithContextPrepends) {
  Status status = NotFoundError("no such value").WithContext("node 'fc1'").WithContext("'a.onnx'");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "'a.onnx': node 'fc1': no such value");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

// The macros propagate errors and unwrap values.
TEST(StatusTest, MacrosPropagate) {
  int out = 0;
  EXPECT_TRUE(Doubled(4, &out).ok());
  EXPECT_EQ(out, 8);
  Status status = Doubled(-1, &out);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "expected a positive number, got -1");
}

// ZG_RET_CHECK names the file, line and condition.
TEST(StatusTest, RetCheckNamesCondition) {
  Status status = FailsInternally();
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("status_test.cc"), std::string_view::npos);
  EXPECT_NE(status.message().find("1 + 1 == 3"), std::string_view::npos);
}

// Copies are deep; StatusOr built from OK is an internal error rather than an empty value.
TEST(StatusTest, CopyAndStatusOr) {
  Status a = DataLossError("truncated");
  Status b = a;
  EXPECT_EQ(b.ToString(), "DATA_LOSS: truncated");
  StatusOr<int> from_ok = Status::Ok();
  EXPECT_FALSE(from_ok.ok());
  EXPECT_EQ(from_ok.status().code(), StatusCode::kInternal);
}

// StrCat formats numbers, strings and booleans.
TEST(StatusTest, StrCatFormats) {
  EXPECT_EQ(StrCat("a", 1, ' ', 2.5, " ", true, std::string_view("z")), "a1 2.5 truez");
  EXPECT_EQ(StrJoin(std::vector<int64_t>{1, 2, 3}, ","), "1,2,3");
}

}  // namespace
}  // namespace zerograph
