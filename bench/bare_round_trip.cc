// bare-round-trip IN OUT: the bare protobuf round trip of an ONNX file as a program of its own,
// the baseline graph-io-bench times rewrite-graph against. It reads IN, parses it into a heap
// onnx::ModelProto, serializes it and writes OUT as SaveModel does (temporary file, fsync,
// rename), then exits without freeing the model, as rewrite-graph exits without freeing its
// graph. Timed from fork to exit like rewrite-graph, it pays what a program pays that a run
// inside an existing process does not: starting, loading its libraries, and the kernel dropping
// its memory at exit. It links protobuf and ONNX's messages only.

#include <cstdio>
#include <cstdlib>
#include <string>

#include <onnx/onnx_pb.h>

#include "bare_file_io.h"

namespace {

int Fail(const char* what, const std::string& path) {
  std::fprintf(stderr, "bare-round-trip: %s '%s'\n", what, path.c_str());
  return 1;
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
  if (!zerograph::bench::ReadWholeFile(in, *bytes)) return Fail("cannot read", in);
  if (!model->ParseFromString(*bytes)) return Fail("cannot parse", in);
  if (!model->SerializeToString(serialized)) return Fail("cannot serialize", in);
  if (!zerograph::bench::WriteFileDurably(out, *serialized)) return Fail("cannot write", out);
  return EXIT_SUCCESS;
}
