#include "importers/input_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <string>

namespace stepscope {
namespace {

std::string Gzip(const std::string& data) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string TempFile(const std::string& contents) {
  char path[] = "/tmp/stepscope_input_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, contents.data(), contents.size()), static_cast<ssize_t>(contents.size()));
  close(fd);
  return path;
}

StatusOr<std::string> ReadAll(const std::string& path, size_t chunk) {
  ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, InputStream::Open(path));
  std::string out, buf(chunk, '\0');
  while (true) {
    ASSIGN_OR_RETURN(size_t n, in->Read(buf.data(), buf.size()));
    if (n == 0) break;
    out.append(buf.data(), n);
  }
  return out;
}

std::string Payload() {
  std::string s;
  for (int i = 0; i < 200000; ++i) s += "{\"ts\": " + std::to_string(i) + ".125},";
  return s;
}

TEST(InputStream, PlainAndGzipReadTheSameBytes) {
  std::string data = Payload();
  std::string plain = TempFile(data), gz = TempFile(Gzip(data));
  for (size_t chunk : {size_t{1} << 20, size_t{4093}}) {
    auto a = ReadAll(plain, chunk);
    auto b = ReadAll(gz, chunk);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, data);
    EXPECT_EQ(*b, data);
  }
  unlink(plain.c_str());
  unlink(gz.c_str());
}

TEST(InputStream, ConcatenatedMembersAndZeroPadding) {
  std::string gz = TempFile(Gzip("hello ") + Gzip("world") + std::string(100, '\0'));
  auto r = ReadAll(gz, 3);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "hello world");
  unlink(gz.c_str());
}

TEST(InputStream, TruncatedGzipNamesTheCompressedOffset) {
  std::string z = Gzip(Payload());
  std::string gz = TempFile(z.substr(0, z.size() / 2));
  auto r = ReadAll(gz, 1 << 16);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("truncated gzip data: the file ends at compressed byte " +
                                      std::to_string(z.size() / 2)),
            std::string::npos)
      << r.status().message();
  unlink(gz.c_str());
}

TEST(InputStream, CorruptAndTrailingData) {
  std::string z = Gzip(Payload());
  std::string corrupt = z;
  for (size_t i = 100; i < 200; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  std::string p1 = TempFile(corrupt), p2 = TempFile(z + "garbage");
  auto r1 = ReadAll(p1, 1 << 16);
  ASSERT_FALSE(r1.ok());
  EXPECT_NE(r1.status().message().find("corrupt gzip data near compressed byte"),
            std::string::npos);
  auto r2 = ReadAll(p2, 1 << 16);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("unexpected data after the gzip stream at compressed byte " +
                                       std::to_string(z.size())),
            std::string::npos)
      << r2.status().message();
  unlink(p1.c_str());
  unlink(p2.c_str());
}

TEST(ReadAhead, DeliversEveryChunkInOrderAndStopsEarlyCleanly) {
  std::string data = Payload();
  std::string gz = TempFile(Gzip(data));
  {
    auto in = InputStream::Open(gz);
    ASSERT_TRUE(in.ok());
    ReadAhead r(in->get(), 1000, 3);
    std::string out;
    while (true) {
      auto c = r.Next();
      ASSERT_TRUE(c.ok());
      if (c->empty()) break;
      out.append(c->data(), c->size());
    }
    EXPECT_EQ(out, data);
  }
  {
    auto in = InputStream::Open(gz);
    ReadAhead r(in->get(), 1000, 3);
    ASSERT_TRUE(r.Next().ok());  // destroyed while the producer is still running
  }
  unlink(gz.c_str());
}

}  // namespace
}  // namespace stepscope
