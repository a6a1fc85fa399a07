#include "export/output_file.h"

#include <cerrno>
#include <cstring>

namespace stepscope {

OutputFile::OutputFile(const std::string& path) : atomic_(path) {}

OutputFile::~OutputFile() {
  if (f_) std::fclose(f_);
}

Status OutputFile::Open() {
  f_ = std::fopen(atomic_.temp_path().c_str(), "wb");
  if (!f_) return IoError(atomic_.final_path() + ": cannot create: " + std::strerror(errno));
  std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
  return OkStatus();
}

uint64_t OutputFile::bytes_written() const {
  return f_ ? static_cast<uint64_t>(std::ftell(f_)) : 0;
}

Status OutputFile::Close() {
  if (!f_) return Internal("OutputFile::Close without Open");
  bool ok = !failed_ && std::fflush(f_) == 0;
  int err = errno;
  ok = (std::fclose(f_) == 0) && ok;
  f_ = nullptr;
  if (!ok)
    return IoError(atomic_.final_path() + ": write failed: " + std::strerror(err ? err : errno));
  return atomic_.Commit();
}

}  // namespace stepscope
