#include "zerograph/core/output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace zerograph {
namespace {

namespace fs = std::filesystem;

class OutputPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("output_path_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Touch(const std::string& name) const { std::ofstream(Path(name)) << "x"; }

  fs::path dir_;
};

TEST_F(OutputPathTest, NewFileInAnExistingFolderIsAccepted) {
  EXPECT_TRUE(CheckOutputPath("-o", Path("out.onnx"), OutputKind::kFile).ok());
  Touch("old.onnx");
  EXPECT_TRUE(CheckOutputPath("-o", Path("old.onnx"), OutputKind::kFile).ok());  // replaced
}

TEST_F(OutputPathTest, MissingFolderIsRefusedNamingOptionAndFolder) {
  const Status status = CheckOutputPath("--trace", Path("nodir/t.json"), OutputKind::kFile);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("--trace '" + Path("nodir/t.json") + "'"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("folder '" + Path("nodir") + "' does not exist"),
            std::string::npos)
      << status.message();
  EXPECT_FALSE(fs::exists(Path("nodir")));  // nothing created
}

TEST_F(OutputPathTest, OutputThatIsAnInputIsRefused) {
  Touch("in.onnx");
  const std::string inputs[] = {Path("in.onnx")};
  const Status status = CheckOutputPath("-o", Path("./in.onnx"), OutputKind::kFile, inputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("is also the input"), std::string::npos) << status.message();
}

TEST_F(OutputPathTest, KindsMustMatch) {
  fs::create_directories(Path("folder"));
  Touch("file");
  EXPECT_NE(CheckOutputPath("-o", Path("folder"), OutputKind::kFile).message().find("is a folder"),
            std::string::npos);
  EXPECT_NE(
      CheckOutputPath("--save", Path("file"), OutputKind::kFolder).message().find("not a folder"),
      std::string::npos);
  EXPECT_TRUE(CheckOutputPath("--save", Path("folder"), OutputKind::kFolder).ok());
  EXPECT_TRUE(CheckOutputPath("--save", Path("new"), OutputKind::kFolder).ok());
  EXPECT_FALSE(CheckOutputPath("--save", Path("a/b"), OutputKind::kFolder).ok());
}

TEST_F(OutputPathTest, ReadOnlyFolderIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write into any folder; the check cannot fail";
  fs::create_directories(Path("ro"));
  fs::permissions(Path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  const Status status = CheckOutputPath("--loss-log", Path("ro/l.log"), OutputKind::kFile);
  fs::permissions(Path("ro"), fs::perms::owner_all);
  EXPECT_NE(status.message().find("is not writable"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace zerograph
