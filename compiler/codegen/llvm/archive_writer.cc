#include "compiler/codegen/llvm/archive_writer.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace lathe {

absl::StatusOr<std::string> WriteArchive(
    const std::vector<ArchiveMember>& members) {
  std::vector<llvm::NewArchiveMember> entries;
  entries.reserve(members.size());
  for (const ArchiveMember& member : members) {
    // The buffers refer to `members`, which outlives the call.
    llvm::NewArchiveMember entry(llvm::MemoryBufferRef(
        llvm::StringRef(member.bytes.data(), member.bytes.size()),
        member.name));
    entries.push_back(std::move(entry));
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> archive =
      llvm::writeArchiveToBuffer(entries, /*WriteSymtab=*/true,
                                 llvm::object::Archive::K_GNU,
                                 /*Deterministic=*/true, /*Thin=*/false);
  if (!archive) {
    return absl::InternalError(
        absl::StrCat("archive: ", llvm::toString(archive.takeError())));
  }
  return std::string((*archive)->getBufferStart(), (*archive)->getBufferSize());
}

}  // namespace lathe
