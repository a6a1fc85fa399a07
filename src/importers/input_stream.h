// InputStream: the bytes of an input file, gzip-decoded on the fly when the
// file starts with the gzip magic (1f 8b). Reads in large chunks; memory is a
// few fixed buffers whatever the file size.
//
// Errors name the position: a truncated gzip stream reports the compressed
// byte where it ends and how much was decoded; corrupt data reports the
// compressed offset of the failing block. Concatenated gzip members (as
// `cat a.gz b.gz` makes) decode as one stream; trailing zero padding is
// ignored, other trailing bytes are an error.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace stepscope {

class InputStream {
 public:
  static StatusOr<std::unique_ptr<InputStream>> Open(const std::string& path);
  ~InputStream();

  // Reads up to `n` decoded bytes into `buf`; returns 0 at the end of the data.
  StatusOr<size_t> Read(char* buf, size_t n);

  bool gzip() const { return gzip_; }
  uint64_t decoded_bytes() const { return decoded_; }
  uint64_t file_bytes_read() const { return file_read_; }
  // Size of the file on disk (0 when unknown).
  uint64_t file_size() const { return file_size_; }

 private:
  InputStream() = default;
  StatusOr<size_t> ReadRaw(char* buf, size_t n);
  StatusOr<size_t> ReadGzip(char* buf, size_t n);
  Status Refill();

  FILE* f_ = nullptr;
  bool gzip_ = false;
  bool zinit_ = false;
  bool eof_ = false;        // the file is exhausted
  bool stream_end_ = false; // the last gzip member ended and nothing follows
  z_stream zs_{};
  std::vector<unsigned char> in_;
  uint64_t file_read_ = 0;
  uint64_t file_size_ = 0;
  uint64_t decoded_ = 0;
};

}  // namespace stepscope
