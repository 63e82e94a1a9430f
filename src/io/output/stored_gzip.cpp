#include "io/output/stored_gzip.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomshard::io {
namespace {

// RFC 1952 header flags.
constexpr std::uint8_t kFlagHeaderCrc = 0x02;
constexpr std::uint8_t kFlagExtra = 0x04;
constexpr std::uint8_t kFlagName = 0x08;
constexpr std::uint8_t kFlagComment = 0x10;
constexpr std::size_t kFixedHeaderBytes = 10;
// A name or comment longer than this is not ours: the probe gives up.
constexpr std::size_t kProbeBytes = std::size_t{1} << 16;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& why) {
  throw std::runtime_error("'" + path.string() + "': " + why);
}

}  // namespace

bool gzip_starts_stored(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::uint8_t> head(kProbeBytes);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  const std::size_t n = static_cast<std::size_t>(in.gcount());
  if (n == 0) return false;
  if (n < kFixedHeaderBytes + 1 || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8) {
    fail(path, "does not start with a gzip member");
  }
  const std::uint8_t flags = head[3];
  std::size_t at = kFixedHeaderBytes;
  const auto past_zero = [&](const char* field) {
    while (at < n && head[at] != 0) ++at;
    if (at == n) fail(path, std::string("gzip header's ") + field + " runs past the probe");
    ++at;
  };
  if ((flags & kFlagExtra) != 0) {
    if (at + 2 > n) fail(path, "gzip header's extra field runs past the probe");
    at += 2 + (std::size_t{head[at]} | (std::size_t{head[at + 1]} << 8));
  }
  if ((flags & kFlagName) != 0) past_zero("name");
  if ((flags & kFlagComment) != 0) past_zero("comment");
  if ((flags & kFlagHeaderCrc) != 0) at += 2;
  if (at >= n) fail(path, "gzip member has no deflate data within the probe");
  // The first block's header: BFINAL in bit 0, BTYPE in bits 1-2.
  return ((head[at] >> 1) & 3) == 0;
}

}  // namespace bloomshard::io
