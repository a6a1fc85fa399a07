// OutputFile: a buffered, atomic output file for the exporters and the report.
// Data goes to a temporary file beside the target (AtomicOutput); Close()
// flushes, checks every write and renames. Destroyed without Close(), it
// removes the temporary file, so an error never leaves a half-written output.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "common/file_util.h"
#include "common/status.h"

namespace stepscope {

class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Opens the temporary file; call once before writing.
  Status Open();
  void Write(std::string_view data) {
    if (f_ && std::fwrite(data.data(), 1, data.size(), f_) != data.size()) failed_ = true;
  }
  uint64_t bytes_written() const;
  // Flushes, closes and renames onto the final path.
  Status Close();

 private:
  AtomicOutput atomic_;
  std::FILE* f_ = nullptr;
  bool failed_ = false;
};

}  // namespace stepscope
