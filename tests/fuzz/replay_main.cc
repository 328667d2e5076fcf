// The main() of the <target>_replay programs: runs a fuzz target's LLVMFuzzerTestOneInput once
// per input file, without libFuzzer, so the ordinary test builds (gcc, clang + ASan) replay the
// committed corpora under ctest.
//   <target>_replay <file or directory>...
// A directory stands for every regular file under it (recursively), in sorted path order; files
// named directly run in the order given. Each input is copied into a heap buffer of exactly its
// size, as libFuzzer does, so an overread is caught by ASan. A broken invariant aborts inside
// the target (fuzz::Fail), which fails the program like any other crash.
// Exit status: 0 when every input ran; 1 when no argument was given, a path does not exist or
// cannot be read, a directory holds no files, or the target returned a value libFuzzer refuses
// (anything but 0 and -1). So a missing or empty corpus cannot pass silently.
// Hooks: LLVMFuzzerInitialize runs once first when the target defines one (weak reference);
// mutator hooks (LLVMFuzzerCustomMutator, ...) only matter while fuzzing and are not called.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

// Appends the inputs path stands for to *files. False (with a message) when there are none.
bool Collect(const fs::path& path, std::vector<fs::path>* files) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    std::fprintf(stderr, "replay: %s does not exist\n", path.c_str());
    return false;
  }
  if (fs::is_regular_file(st)) {
    files->push_back(path);
    return true;
  }
  if (!fs::is_directory(st)) {
    std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", path.c_str());
    return false;
  }
  std::vector<fs::path> found;
  fs::recursive_directory_iterator it(path, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) found.push_back(it->path());
  }
  if (ec) {
    std::fprintf(stderr, "replay: cannot list %s: %s\n", path.c_str(), ec.message().c_str());
    return false;
  }
  if (found.empty()) {
    std::fprintf(stderr, "replay: %s holds no inputs\n", path.c_str());
    return false;
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
  return true;
}

bool ReadFile(const fs::path& path, std::vector<char>* bytes) {
  std::ifstream in(path, std::ios::binary);
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad() && in.is_open();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <file or directory>...\n", argv[0]);
    return 1;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; i++) {
    if (!Collect(argv[i], &files)) return 1;
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);

  std::vector<char> bytes;
  for (const fs::path& file : files) {
    if (!ReadFile(file, &bytes)) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 1;
    }
    // Named before it runs, so a crash's output says which input it was.
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
    std::fflush(stderr);
    // Exactly the input's size; new[] of 0 still gives a distinct pointer.
    std::unique_ptr<uint8_t[]> data(new uint8_t[bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), data.get());
    const int result = LLVMFuzzerTestOneInput(data.get(), bytes.size());
    if (result != 0 && result != -1) {
      std::fprintf(stderr, "replay: %s: LLVMFuzzerTestOneInput returned %d\n", file.c_str(),
                   result);
      return 1;
    }
  }
  std::printf("replay: ran %zu inputs\n", files.size());
  return 0;
}
