#include "zerograph/core/io_error.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace zerograph {
namespace {

// A path the user can fix is bad input; what the machine did is a runtime failure.
TEST(IoErrorTest, MapsErrnoToCodes) {
  EXPECT_EQ(IoError("cannot open", "a", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(IoError("cannot open", "a", ENOTDIR).code(), StatusCode::kNotFound);
  for (int error : {EACCES, EPERM, EISDIR, EROFS, ELOOP, ENAMETOOLONG}) {
    EXPECT_EQ(IoError("cannot open", "a", error).code(), StatusCode::kInvalidArgument) << error;
  }
  for (int error : {ENOSPC, EDQUOT, EIO, EMFILE}) {
    EXPECT_EQ(IoError("cannot write", "a", error).code(), StatusCode::kUnavailable) << error;
  }
}

// Permission denied exits 2 whether the file is a model or a checkpoint.
TEST(IoErrorTest, PermissionDeniedIsBadInput) {
  EXPECT_EQ(IoError("cannot create", "ckpt/x", EACCES).ExitCode(), kExitBadInput);
  EXPECT_EQ(IoError("cannot write", "ckpt/x", ENOSPC).ExitCode(), kExitRuntime);
}

TEST(IoErrorTest, NamesPathAndReason) {
  EXPECT_EQ(IoError("cannot open", "dir/a.onnx", ENOENT).message(),
            "cannot open 'dir/a.onnx': No such file or directory");
  EXPECT_EQ(IoError("cannot resolve the folder", "", ENOENT).message(),
            "cannot resolve the folder: No such file or directory");
}

}  // namespace
}  // namespace zerograph
