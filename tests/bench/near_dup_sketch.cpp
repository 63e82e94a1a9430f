// The --unit minhash sketch of every line of a text file, through the core
// library (MinHashSketcher), for the near-duplicate quality study and the
// speed comparison with a Python/numpy implementation (docs/near-duplicates.md).
//
//   bloomshard_near_dup_sketch [--print] [--isa scalar|avx2|avx512]
//       [--shingle word:5] [--bands 14] [--rows 8] FILE
//
// --print: one line per input line, "SHINGLES SIGNATURE KEYS" with the
// signature as bands x rows 8-digit hex values and the band keys as 32-digit
// hex digests, both concatenated; a line that is not UTF-8 prints "ERROR
// reason". Without it: one summary line (lines, bytes, shingles, seconds
// spent sketching, MB/s, an XOR of every band key so the work cannot be
// optimized away). Reads the whole file first, so the timing is the sketch's.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/minhash/minhash_sketch.hpp"

namespace {

namespace core = bloomshard::core;

struct Options {
  bool print = false;
  core::SignatureIsa isa = core::signature_isa();
  core::MinHashConfig config{};
  std::string path;
};

core::SignatureIsa parse_isa(std::string_view name) {
  for (const auto isa :
       {core::SignatureIsa::kScalar, core::SignatureIsa::kAvx2, core::SignatureIsa::kAvx512}) {
    if (core::signature_isa_name(isa) == name) {
      if (!core::signature_isa_supported(isa)) {
        throw std::invalid_argument("--isa " + std::string(name) + ": not on this CPU");
      }
      return isa;
    }
  }
  throw std::invalid_argument("--isa " + std::string(name) + " (expected scalar, avx2 or avx512)");
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--print") {
      o.print = true;
    } else if (arg == "--isa") {
      o.isa = parse_isa(value());
    } else if (arg == "--shingle") {
      o.config.shingle = core::parse_shingle_spec(value());
    } else if (arg == "--bands") {
      o.config.bands = static_cast<std::uint32_t>(std::stoul(value()));
    } else if (arg == "--rows") {
      o.config.rows = static_cast<std::uint32_t>(std::stoul(value()));
    } else if (o.path.empty() && !arg.starts_with("--")) {
      o.path = arg;
    } else {
      throw std::invalid_argument("unknown argument " + std::string(arg));
    }
  }
  if (o.path.empty()) throw std::invalid_argument("no input FILE");
  return o;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

void print_sketch(const core::MinHashSketch& s, std::string& line) {
  char hex[40];
  line = std::to_string(s.shingles);
  line += ' ';
  for (const std::uint32_t v : s.signature) {
    std::snprintf(hex, sizeof hex, "%08x", v);
    line += hex;
  }
  line += ' ';
  for (const core::BandKey& k : s.band_keys) {
    for (const std::uint8_t b : k) {
      std::snprintf(hex, sizeof hex, "%02x", b);
      line += hex;
    }
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
}

int run(const Options& o) {
  const std::vector<std::string> lines = read_lines(o.path);
  core::MinHashSketcher sketcher(o.config, o.isa);
  core::MinHashSketch sketch;
  std::string error;
  std::string out;
  std::uint64_t bytes = 0;
  std::uint64_t shingles = 0;
  std::uint64_t checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& text : lines) {
    bytes += text.size() + 1;
    if (!sketcher.sketch(text, sketch, error)) {
      if (o.print) std::printf("ERROR %s\n", error.c_str());
      continue;
    }
    shingles += sketch.shingles;
    if (o.print) {
      print_sketch(sketch, out);
      continue;
    }
    for (const core::BandKey& k : sketch.band_keys) {
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < 8; ++i) word |= static_cast<std::uint64_t>(k[i]) << (8 * i);
      checksum ^= word;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!o.print) {
    std::printf(
        "lines %zu bytes %llu shingles %llu seconds %.3f MB/s %.1f isa %s keys-xor %016llx\n",
        lines.size(), static_cast<unsigned long long>(bytes),
        static_cast<unsigned long long>(shingles), seconds,
        static_cast<double>(bytes) / seconds / 1e6, core::signature_isa_name(o.isa).data(),
        static_cast<unsigned long long>(checksum));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_options(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bloomshard_near_dup_sketch: %s\n", e.what());
    return 2;
  }
}
