// bare-round-trip IN OUT: the bare protobuf round trip of an ONNX file as a program of its own,
// the baseline graph-io-bench times rewrite-graph against. It reads IN, parses it into a heap
// onnx::ModelProto, serializes it and writes OUT as SaveModel does (temporary file, fsync,
// rename), then exits without freeing the model, as rewrite-graph exits without freeing its
// graph. Timed from fork to exit like rewrite-graph, it pays what a program pays that a run
// inside an existing process does not: starting, loading its libraries, and the kernel dropping
// its memory at exit. It links protobuf and ONNX's messages only.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <onnx/onnx_pb.h>

namespace {

int Fail(const char* what, const std::string& path) {
  std::fprintf(stderr, "bare-round-trip: %s '%s'\n", what, path.c_str());
  return 1;
}

bool ReadAll(const std::string& path, std::string& bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  bool ok = ::fstat(fd, &info) == 0;
  bytes.resize(ok ? static_cast<size_t>(info.st_size) : 0);
  for (size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ::close(fd);
  return ok;
}

bool WriteDurably(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  bool ok = true;
  for (size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  return ok && ::rename(temp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bare-round-trip IN OUT\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  // Left to the exit, as rewrite-graph leaves its graph.
  auto* bytes = new std::string();
  auto* model = new onnx::ModelProto();
  auto* serialized = new std::string();
  if (!ReadAll(in, *bytes)) return Fail("cannot read", in);
  if (!model->ParseFromString(*bytes)) return Fail("cannot parse", in);
  if (!model->SerializeToString(serialized)) return Fail("cannot serialize", in);
  if (!WriteDurably(out, *serialized)) return Fail("cannot write", out);
  return EXIT_SUCCESS;
}
