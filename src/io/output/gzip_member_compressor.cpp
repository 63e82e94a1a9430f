#include "io/output/gzip_member_compressor.hpp"

#include <libdeflate.h>

#include <new>
#include <stdexcept>
#include <string>

namespace bloomshard::io {

GzipMemberCompressor::GzipMemberCompressor(int level) {
  if (level < kGzipStoredLevel || level > kGzipMaxLevel) {
    throw std::invalid_argument("gzip level must be " + std::to_string(kGzipStoredLevel) + " to " +
                                std::to_string(kGzipMaxLevel) + ", not " + std::to_string(level));
  }
  compressor_ = libdeflate_alloc_compressor(level);
  if (compressor_ == nullptr) throw std::bad_alloc();
}

GzipMemberCompressor::~GzipMemberCompressor() { libdeflate_free_compressor(compressor_); }

std::size_t GzipMemberCompressor::bound(std::size_t in_bytes) const noexcept {
  return libdeflate_gzip_compress_bound(compressor_, in_bytes);
}

std::size_t GzipMemberCompressor::compress(std::span<const char> in, std::span<char> out) {
  const std::size_t n =
      libdeflate_gzip_compress(compressor_, in.data(), in.size(), out.data(), out.size());
  // 0: the member did not fit, which bound() rules out.
  if (n == 0) throw std::length_error("gzip member larger than its output buffer");
  return n;
}

}  // namespace bloomshard::io
