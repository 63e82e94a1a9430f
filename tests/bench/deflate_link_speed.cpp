// libdeflate's level-6 gzip compression of one file in 1 MiB calls (the
// job's output writer makes one gzip member per 1 MiB stage), timed in CPU
// seconds. Built twice: bloomshard_deflate_static links Debian's
// libdeflate.a, as the project does (cmake/BloomshardDependencies.cmake),
// bloomshard_deflate_shared its libdeflate.so.0; the two print the same
// bytes and their times give the ratio of docs/performance.md, "libdeflate
// from its static archive". Not a ctest test.
//
// usage: bloomshard_deflate_{static,shared} FILE [--level L] [--repeat K]
#include <libdeflate.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "process_cpu_seconds.hpp"

int main(int argc, char** argv) {
  try {
    if (argc < 2) throw std::invalid_argument("missing FILE");
    int level = 6;
    int repeat = 3;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--level") {
        level = std::stoi(argv[i + 1]);
      } else if (flag == "--repeat") {
        repeat = std::stoi(argv[i + 1]);
      } else {
        throw std::invalid_argument("unknown option " + flag);
      }
    }
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot open ") + argv[1]);
    const std::vector<char> text{std::istreambuf_iterator<char>(in), {}};
    constexpr std::size_t kCallBytes = std::size_t{1} << 20;
    libdeflate_compressor* compressor = libdeflate_alloc_compressor(level);
    if (compressor == nullptr) throw std::runtime_error("libdeflate_alloc_compressor failed");
    std::vector<char> out(libdeflate_gzip_compress_bound(compressor, kCallBytes));
    std::vector<double> seconds;
    std::size_t bytes_out = 0;
    for (int r = 0; r < repeat; ++r) {
      bytes_out = 0;
      const double start = bloomshard::bench::process_cpu_seconds();
      for (std::size_t at = 0; at < text.size(); at += kCallBytes) {
        const std::size_t len = std::min(kCallBytes, text.size() - at);
        bytes_out +=
            libdeflate_gzip_compress(compressor, text.data() + at, len, out.data(), out.size());
      }
      seconds.push_back(bloomshard::bench::process_cpu_seconds() - start);
      std::printf("run %d: %zu bytes in, %zu out, %.3f CPU s\n", r + 1, text.size(), bytes_out,
                  seconds.back());
    }
    libdeflate_free_compressor(compressor);
    std::sort(seconds.begin(), seconds.end());
    std::printf("median %.3f CPU s, %.1f MB/s\n", seconds[seconds.size() / 2],
                static_cast<double>(text.size()) / seconds[seconds.size() / 2] / 1e6);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deflate_link_speed: %s\nusage: %s FILE [--level L] [--repeat K]\n",
                 e.what(), argv[0]);
    return 1;
  }
  return 0;
}
