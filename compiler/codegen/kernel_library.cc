#include "compiler/codegen/kernel_library.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/codegen/llvm/archive_writer.h"
#include "compiler/codegen/llvm/object_emitter.h"
#include "compiler/codegen/runtime_objects.h"

extern char** environ;

namespace lathe {
namespace {

namespace fs = std::filesystem;

// The runtime's objects as archive members, in their (sorted) embedded order.
std::vector<ArchiveMember> RuntimeMembers() {
  std::vector<ArchiveMember> members;
  for (const EmbeddedObject& object : RuntimeObjects()) {
    members.push_back(
        {object.name,
         std::string(reinterpret_cast<const char*>(object.data), object.size)});
  }
  return members;
}

// The C compiler driver: $CC when set (a single word), else `cc` on PATH.
absl::StatusOr<std::string> FindCCompiler() {
  const char* env = std::getenv("CC");
  std::string name = env != nullptr && env[0] != '\0' ? env : "cc";
  if (absl::StrContains(name, '/')) {
    if (access(name.c_str(), X_OK) == 0) return name;
  } else if (const char* path = std::getenv("PATH")) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/", name);
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "shared library: no C compiler found (", name,
      " on PATH or $CC); linking a .so needs a C toolchain, .o and .a do not"));
}

// Runs argv with stdout and stderr into log_path; returns the exit status.
absl::StatusOr<int> RunProcess(const std::vector<std::string>& argv,
                               const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return absl::InternalError(
        absl::StrCat("cannot run ", argv[0], ": ", std::strerror(err)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError("waitpid failed");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A temporary folder removed when this goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (fs::temp_directory_path() / "lathe_link_XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

absl::Status WriteFileBytes(const std::string& path, const std::string& bytes) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    // The reason, where the C library left one ("No such file or directory").
    const int error = errno;
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write ", path,
        error != 0 ? absl::StrCat(": ", std::strerror(error)) : ""));
  }
  return absl::OkStatus();
}

absl::StatusOr<LibraryKind> LibraryKindForPath(const std::string& path) {
  if (absl::EndsWith(path, ".o")) return LibraryKind::kObject;
  if (absl::EndsWith(path, ".a")) return LibraryKind::kStatic;
  if (absl::EndsWith(path, ".so")) return LibraryKind::kShared;
  return absl::InvalidArgumentError(absl::StrCat(
      "output ", path, ": unknown extension (accepted: .o, .a, .so)"));
}

absl::StatusOr<std::string> KernelObject(const KernelProgram& kernel,
                                         const Target& target,
                                         const std::string& function_name) {
  CodegenOptions options;
  options.function_name = function_name;
  return EmitObject(kernel.lowered, target, options);
}

absl::StatusOr<std::string> KernelStaticLibrary(
    const std::string& object, const std::string& function_name) {
  std::vector<ArchiveMember> members = {{function_name + ".o", object}};
  for (ArchiveMember& m : RuntimeMembers()) members.push_back(std::move(m));
  return WriteArchive(members);
}

absl::StatusOr<std::string> KernelObject(
    const std::vector<LibraryKernel>& kernels, const Target& target) {
  std::set<std::string> names;
  std::vector<ObjectKernel> objects;
  for (const LibraryKernel& k : kernels) {
    if (!IsCIdentifier(k.function_name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel library: function ", k.function_name,
                       " is not a C identifier"));
    }
    if (!names.insert(k.function_name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel library: two kernels are named ", k.function_name));
    }
    ObjectKernel object;
    object.lowered = &k.kernel->lowered;
    object.options.function_name = k.function_name;
    objects.push_back(std::move(object));
  }
  return EmitObject(objects, target, "lathe_kernels");
}

absl::Status LinkSharedLibrary(const std::string& object,
                               const std::string& function_name,
                               const std::string& path) {
  return LinkSharedLibrary(object, std::vector<std::string>{function_name},
                           path);
}

absl::Status LinkSharedLibrary(const std::string& object,
                               const std::vector<std::string>& function_names,
                               const std::string& path) {
  absl::StatusOr<std::string> cc = FindCCompiler();
  if (!cc.ok()) return cc.status();
  TempDir dir;
  if (dir.path().empty())
    return absl::InternalError("shared library: cannot create a temp folder");
  // The runtime goes in as an archive so that --exclude-libs hides it; the
  // functions below are the library's own doors to its private runtime.
  absl::StatusOr<std::string> runtime = WriteArchive(RuntimeMembers());
  if (!runtime.ok()) return runtime.status();
  std::string kernel_o = dir.path() + "/kernel.o";
  std::string runtime_a = dir.path() + "/liblathe_runtime.a";
  std::string setter_c = dir.path() + "/set_num_threads.c";
  std::string log = dir.path() + "/cc.log";
  absl::Status st = WriteFileBytes(kernel_o, object);
  if (st.ok()) st = WriteFileBytes(runtime_a, *runtime);
  if (st.ok()) {
    std::string setters =
        "void lathe_set_num_threads(int n);\nvoid "
        "lathe_release_scratch(void);\n";
    for (const std::string& name : function_names) {
      absl::StrAppend(&setters,
                      "__attribute__((visibility(\"default\"))) void ",
                      SharedSetNumThreadsName(name),
                      "(int n) { lathe_set_num_threads(n); }\n",
                      "__attribute__((visibility(\"default\"))) void ",
                      SharedReleaseScratchName(name),
                      "(void) { lathe_release_scratch(); }\n");
    }
    st = WriteFileBytes(setter_c, setters);
  }
  if (!st.ok())
    return absl::InternalError(absl::StrCat("shared library: ", st.message()));
  std::vector<std::string> argv = {
      *cc,         "-shared", "-fPIC",
      "-o",        path,      kernel_o,
      setter_c,    runtime_a, "-Wl,--exclude-libs,ALL",
      "-lpthread", "-lm"};
  absl::StatusOr<int> rc = RunProcess(argv, log);
  if (!rc.ok()) return rc.status();
  if (*rc != 0) {
    std::string output = ReadFile(log);
    while (!output.empty() && output.back() == '\n') output.pop_back();
    for (char& c : output) {
      if (c == '\n') c = ' ';  // one line on stderr, as every failure
    }
    return absl::InternalError(absl::StrCat(
        "shared library: ", *cc, " failed (exit ", *rc, "): ", output));
  }
  return absl::OkStatus();
}

absl::Status WriteKernelLibrary(const KernelProgram& kernel,
                                const Target& target,
                                const std::string& function_name,
                                const std::string& path) {
  absl::StatusOr<LibraryKind> kind = LibraryKindForPath(path);
  if (!kind.ok()) return kind.status();
  absl::StatusOr<std::string> object =
      KernelObject(kernel, target, function_name);
  if (!object.ok()) return object.status();
  switch (*kind) {
    case LibraryKind::kObject:
      return WriteFileBytes(path, *object);
    case LibraryKind::kStatic: {
      absl::StatusOr<std::string> archive =
          KernelStaticLibrary(*object, function_name);
      if (!archive.ok()) return archive.status();
      return WriteFileBytes(path, *archive);
    }
    case LibraryKind::kShared:
      return LinkSharedLibrary(*object, function_name, path);
  }
  return absl::InternalError("unreachable library kind");
}

absl::Status WriteKernelLibrary(const std::vector<LibraryKernel>& kernels,
                                const Target& target, const std::string& path) {
  absl::StatusOr<LibraryKind> kind = LibraryKindForPath(path);
  if (!kind.ok()) return kind.status();
  absl::StatusOr<std::string> object = KernelObject(kernels, target);
  if (!object.ok()) return object.status();
  switch (*kind) {
    case LibraryKind::kObject:
      return WriteFileBytes(path, *object);
    case LibraryKind::kStatic: {
      absl::StatusOr<std::string> archive =
          KernelStaticLibrary(*object, "lathe_kernels");
      if (!archive.ok()) return archive.status();
      return WriteFileBytes(path, *archive);
    }
    case LibraryKind::kShared: {
      std::vector<std::string> names;
      for (const LibraryKernel& k : kernels) names.push_back(k.function_name);
      return LinkSharedLibrary(*object, names, path);
    }
  }
  return absl::InternalError("unreachable library kind");
}

}  // namespace lathe
