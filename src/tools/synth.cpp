#include "tools/synth.hpp"

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "app/cli/exit_codes.hpp"
#include "app/options/exact_options.hpp"
#include "io/errors.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

// Records are built into one reused buffer and handed to the part file in chunks
// of about this size: no allocation per record, few syscalls.
constexpr std::size_t kFlushBytes = 1U << 20;
// A duplicate repeats one of the last kNearbyWindow distinct keys with
// probability kNearbyPercent %, otherwise any earlier key (mostly cross-file).
constexpr std::uint64_t kNearbyWindow = 16;
constexpr std::uint64_t kNearbyPercent = 30;
constexpr std::uint32_t kMaxFiles = 99999;  // five-digit part numbers
constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

__extension__ typedef unsigned __int128 Uint128;

constexpr std::uint64_t mix64(std::uint64_t x) noexcept {  // splitmix64 finalizer
  x += kGolden;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// xoshiro256**: its output is fixed by its definition, unlike std::
// distributions, so a seed names the same corpus on every standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept {
    for (auto& word : s_) {
      word = mix64(seed);
      seed += kGolden;
    }
  }
  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, n) for n >= 1 (Lemire's multiply-shift; bias < n / 2^64).
  std::uint64_t below(std::uint64_t n) noexcept {
    return static_cast<std::uint64_t>((static_cast<Uint128>(next()) * n) >> 64);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  std::array<std::uint64_t, 4> s_{};
};

// ---------------------------------------------------------------- part files

io::Compression io_compression(SynthCompression c) {
  switch (c) {
    case SynthCompression::kGzip:
      return io::Compression::kGzip;
    case SynthCompression::kZstd:
      return io::Compression::kZstd;
    case SynthCompression::kNone:
      break;
  }
  return io::Compression::kNone;
}

// One part file, written through io's OutputWriter as one gzip member or
// zstd frame (content checksum on) at level 1: generation speed over size.
// Its I/O errors become SynthError.
class PartFile {
 public:
  PartFile(fs::path path, SynthCompression c) : path_(std::move(path)) {
    io::OutputOptions options;
    options.level = 1;
    options.zstd_content_size = false;  // the corpora's bytes as before
    options.gzip_with_zlib = true;      // likewise
    try {
      out_ = io::OutputWriter::create(path_, io_compression(c), options);
    } catch (const io::OutputError&) {
      throw SynthError("cannot create '" + path_.string() + "'");
    }
  }
  void write(std::string_view data) {
    try {
      out_.write_bytes(data);
    } catch (const io::OutputError& e) {
      throw SynthError("write failed on '" + path_.string() + "': " + e.reason());
    }
  }
  void close() {
    try {
      out_.close();
    } catch (const io::OutputError& e) {
      throw SynthError("close failed on '" + path_.string() + "': " + e.reason());
    }
  }

 private:
  fs::path path_;
  io::OutputWriter out_;
};

// ---------------------------------------------------------------- records

constexpr std::array<std::string_view, 8> kHosts = {
    "example.org",      "news.example.com", "blog.example.net", "shop.example.io",
    "wiki.example.org", "forum.example.de", "docs.example.dev", "www.example.co.uk"};
constexpr std::array<std::string_view, 8> kSections = {"article", "post",  "p",    "item",
                                                       "wiki",    "story", "2024", "tag"};
constexpr std::array<std::string_view, 5> kLangs = {"en", "de", "fr", "ja", "es"};
// JSON-ready words: a few escapes and multi-byte UTF-8 so readers meet them.
constexpr std::array<std::string_view, 32> kWords = {
    "the",          "data",         "shard",  "filter",  "bloom",   "record",     "crawl",
    "page",         "index",        "search", "network", "cluster", "memory",     "exact",
    "key",          "value",        "stream", "batch",   "round",   "checkpoint", "resume",
    "rank",         "slice",        "owner",  "naïve",   "Straße",  "日本語",     R"(\"quoted\")",
    R"(caf\u00e9)", "line\\nbreak", "🙂",   "of"};

void append_u64(std::string& out, std::uint64_t v) {
  std::array<char, 24> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), res.ptr);
}

void append_hex(std::string& out, std::uint64_t v, int digits) {
  constexpr std::string_view kHex = "0123456789abcdef";
  for (int i = digits - 1; i >= 0; --i) out.push_back(kHex[(v >> (4 * i)) & 0xF]);
}

// Keys are a pure function of (seed, k): nothing is stored per key, and the
// embedded "seed-k" makes keys of different seeds disjoint. All lower case
// ASCII, so every normalization policy leaves them alone.
class KeyMaker {
 public:
  explicit KeyMaker(std::uint64_t seed) : seed_(seed) {}

  std::uint64_t decoration(std::uint64_t k) const noexcept { return mix64(mix64(seed_) ^ k); }
  bool is_url(std::uint64_t k) const noexcept { return (decoration(k) & 3) != 3; }

  void append_key(std::string& out, std::uint64_t k) const {
    const std::uint64_t h = decoration(k);
    if ((h & 3) != 3) {
      out += "https://";
      out += kHosts[(h >> 2) & 7];
      out += '/';
      out += kSections[(h >> 5) & 7];
      out += '/';
      append_hex(out, h >> 20, 11);
      out += '/';
      append_u64(out, seed_);
      out += '-';
      append_u64(out, k);
    } else {
      out += "doc-";
      append_u64(out, seed_);
      out += '-';
      append_u64(out, k);
      out += '-';
      append_hex(out, h >> 32, 8);
    }
  }

  void append_doc_url(std::string& out, std::uint64_t k) const {
    const std::uint64_t h = decoration(k);
    out += "https://";
    out += kHosts[(h >> 8) & 7];
    out += "/doc/";
    append_hex(out, h, 16);
  }

 private:
  std::uint64_t seed_;
};

// The JSONL layout around the key, fixed once per corpus: a dotted key field
// becomes nested objects, and our own field of the same name is left out.
struct JsonLayout {
  std::string key_open;   // {"meta":{"id":"
  std::string key_close;  // "}
  bool url = true, fetched = true, lang = true, text = true;
};

JsonLayout make_layout(const std::string& key_field) {
  if (key_field.empty()) throw std::invalid_argument("--key-field must not be empty");
  for (const char c : key_field) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      throw std::invalid_argument("--key-field must not contain quotes, backslashes or controls");
    }
  }
  JsonLayout layout;
  std::string_view rest = key_field;
  std::string first;
  int depth = 0;
  while (true) {
    const auto dot = rest.find('.');
    const std::string_view part = rest.substr(0, dot);
    if (part.empty()) throw std::invalid_argument("--key-field has an empty path component");
    if (depth == 0) first = std::string(part);
    layout.key_open += "{\"";
    layout.key_open += part;
    layout.key_open += "\":";
    ++depth;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  layout.key_open += '"';
  layout.key_close = "\"";
  layout.key_close.append(static_cast<std::size_t>(depth - 1), '}');
  layout.url = first != "url";
  layout.fetched = first != "fetched";
  layout.lang = first != "lang";
  layout.text = first != "text";
  return layout;
}

class RecordWriter {
 public:
  RecordWriter(const SynthConfig& c)
      : config_(c), keys_(c.seed), layout_(make_layout(c.key_field)) {}

  /// Appends the record of key k; `variant` 0 is the first crawl, others
  /// are re-crawls whose text differs.
  void append(std::string& out, std::uint64_t k, std::uint64_t variant, Rng& rng) const {
    if (config_.format == SynthFormat::kLines) {
      keys_.append_key(out, k);
      out += '\n';
      return;
    }
    out += layout_.key_open;
    keys_.append_key(out, k);
    out += layout_.key_close;
    if (layout_.url) {
      out += ",\"url\":\"";
      if (keys_.is_url(k)) {
        keys_.append_key(out, k);
      } else {
        keys_.append_doc_url(out, k);
      }
      out += '"';
    }
    if (layout_.fetched) {
      out += ",\"fetched\":";
      append_u64(out, 1600000000 + rng.below(100000000));
    }
    Rng text_rng(keys_.decoration(k) ^ mix64(variant));
    if (layout_.lang) {
      out += ",\"lang\":\"";
      out += kLangs[text_rng.below(kLangs.size())];
      out += '"';
    }
    if (layout_.text) {
      out += ",\"text\":\"";
      const std::uint64_t words =
          1 + text_rng.below(6);  // ~120-byte records: 10M of them make the 1.2 GB benchmark corpus
      for (std::uint64_t w = 0; w < words; ++w) {
        if (w != 0) out += ' ';
        out += kWords[text_rng.below(kWords.size())];
      }
      out += '"';
    }
    out += "}\n";
  }

 private:
  const SynthConfig& config_;
  KeyMaker keys_;
  JsonLayout layout_;
};

// Unequal file sizes (weights 1..8) so ranks get unbalanced work.
std::vector<std::uint64_t> file_record_counts(const SynthConfig& c) {
  std::vector<std::uint64_t> weights(c.files);
  std::uint64_t total = 0;
  for (std::uint32_t f = 0; f < c.files; ++f) {
    weights[f] = 1 + (mix64(c.seed ^ (0xf11e5ULL + f)) & 7);
    total += weights[f];
  }
  std::vector<std::uint64_t> counts(c.files);
  std::uint64_t assigned = 0;
  for (std::uint32_t f = 0; f < c.files; ++f) {
    counts[f] = static_cast<std::uint64_t>((static_cast<Uint128>(c.records) * weights[f]) / total);
    assigned += counts[f];
  }
  for (std::uint32_t f = 0; assigned < c.records; f = (f + 1) % c.files) {
    ++counts[f];
    ++assigned;
  }
  return counts;
}

std::string_view extension(const SynthConfig& c) {
  const bool lines = c.format == SynthFormat::kLines;
  switch (c.compression) {
    case SynthCompression::kGzip:
      return lines ? ".txt.gz" : ".jsonl.gz";
    case SynthCompression::kZstd:
      return lines ? ".txt.zst" : ".jsonl.zst";
    case SynthCompression::kNone:
      break;
  }
  return lines ? ".txt" : ".jsonl";
}

fs::path part_path(const SynthConfig& c, std::uint32_t f) {
  std::array<char, 16> name{};
  std::snprintf(name.data(), name.size(), "part-%05u", f);
  fs::path dir = c.out_dir;
  if (f % 4 == 3) dir /= "nested";  // one level down exercises the recursive walk
  return dir / (std::string(name.data()) + std::string(extension(c)));
}

std::string_view compression_name(SynthCompression c) {
  switch (c) {
    case SynthCompression::kGzip:
      return "gz";
    case SynthCompression::kZstd:
      return "zst";
    case SynthCompression::kNone:
      break;
  }
  return "none";
}

void write_manifest(const SynthConfig& c, const SynthSummary& s) {
  const fs::path path =
      c.manifest.empty() ? fs::path(c.out_dir) / "_SYNTH.json" : fs::path(c.manifest);
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "{\"records\":" << s.records << ",\"unique_keys\":" << s.unique_keys
      << ",\"duplicates\":" << s.duplicates << ",\"files\":" << s.files << ",\"seed\":" << c.seed
      << ",\"bytes\":" << s.bytes << ",\"file_bytes\":" << s.file_bytes << ",\"format\":\""
      << (c.format == SynthFormat::kLines ? "lines" : "jsonl") << "\",\"compression\":\""
      << compression_name(c.compression) << "\",\"key_field\":\"" << c.key_field << "\"}\n";
  out.close();
  if (!out) throw SynthError("cannot write '" + path.string() + "'");
}

}  // namespace

SynthSummary write_synth_corpus(const SynthConfig& c) {
  if (c.files < 1 || c.files > kMaxFiles) {
    throw std::invalid_argument("--files must be in [1, " + std::to_string(kMaxFiles) + "]");
  }
  if (!(c.dup_rate >= 0.0 && c.dup_rate < 1.0)) {
    throw std::invalid_argument("--dup-rate must be in [0, 1)");
  }
  if (c.out_dir.empty()) throw std::invalid_argument("no --out given");
  const std::uint64_t dups =
      c.records == 0
          ? 0
          : static_cast<std::uint64_t>(std::llround(static_cast<double>(c.records) * c.dup_rate));
  if (c.records != 0 && dups >= c.records) {
    throw std::invalid_argument("--dup-rate leaves no unique key; lower it");
  }
  const RecordWriter writer(c);
  std::error_code ec;
  fs::create_directories(c.out_dir, ec);
  if (c.files > 3) fs::create_directories(fs::path(c.out_dir) / "nested", ec);
  if (ec) throw SynthError("cannot create '" + c.out_dir + "': " + ec.message());

  const std::vector<std::uint64_t> counts = file_record_counts(c);
  Rng rng(c.seed ^ 0x73796e7468ULL);
  SynthSummary summary;
  summary.files = c.files;
  std::uint64_t unique = 0;
  std::uint64_t position = 0;
  std::uint64_t dups_left = dups;
  std::string buffer;
  buffer.reserve(kFlushBytes + (64U << 10));
  for (std::uint32_t f = 0; f < c.files; ++f) {
    PartFile part(part_path(c, f), c.compression);
    for (std::uint64_t i = 0; i < counts[f]; ++i, ++position) {
      // Selection sampling: exactly `dups` of positions 1..N-1 are repeats.
      const bool dup = position > 0 && rng.below(c.records - position) < dups_left;
      std::uint64_t k = 0;
      std::uint64_t variant = 0;
      if (dup) {
        --dups_left;
        if (rng.below(100) < kNearbyPercent) {
          k = unique - 1 - rng.below(std::min(unique, kNearbyWindow));
        } else {
          k = rng.below(unique);
        }
        // Half of the re-crawls carry other text, as real re-crawls do.
        if (rng.below(2) == 1) variant = 1 + rng.below(1U << 20);
      } else {
        k = unique++;
      }
      writer.append(buffer, k, variant, rng);
      if (buffer.size() >= kFlushBytes) {
        summary.bytes += buffer.size();
        part.write(buffer);
        buffer.clear();
      }
    }
    summary.bytes += buffer.size();
    part.write(buffer);
    buffer.clear();
    part.close();
    summary.file_bytes += fs::file_size(part_path(c, f));
  }
  summary.records = c.records;
  summary.unique_keys = unique;
  summary.duplicates = c.records - unique;
  write_manifest(c, summary);
  return summary;
}

int run_synth(const std::vector<std::string>& args) {
  SynthConfig c;
  std::string compress = "none";
  std::string format = "jsonl";
  po::options_description desc("synth options");
  desc.add_options()("help,h", "show this help")("records", po::value(&c.records)->required(),
                                                 "number of records N")(
      "dup-rate", po::value(&c.dup_rate)->default_value(0.0),
      "fraction D in [0, 1): exactly round(N*D) records repeat an earlier key")(
      "files", po::value(&c.files)->default_value(c.files),
      "number of part files (unequal sizes; every 4th in DIR/nested/)")(
      "out", po::value(&c.out_dir)->required(), "output directory (created)")(
      "compress", po::value(&compress)->default_value(compress), "none | gz | zst")(
      "format", po::value(&format)->default_value(format), "jsonl | lines")(
      "seed", po::value(&c.seed)->default_value(c.seed),
      "PRNG seed; keys embed it, so corpora with other seeds share no key")(
      "key-field", po::value(&c.key_field)->default_value(c.key_field),
      "JSONL key field (dotted path writes nested objects)")(
      "manifest", po::value(&c.manifest),
      "write the manifest here instead of DIR/_SYNTH.json (names starting with '_' are "
      "skipped by dedup's directory walk)");
  try {
    po::variables_map vm;
    po::store(parse_exact_command_line(args, desc), vm);
    if (vm.count("help") != 0U) {
      std::cout << "usage: bloomshard synth --records N --out DIR [options]\n\n" << desc;
      return kExitOk;
    }
    po::notify(vm);
    if (compress == "none") {
      c.compression = SynthCompression::kNone;
    } else if (compress == "gz") {
      c.compression = SynthCompression::kGzip;
    } else if (compress == "zst") {
      c.compression = SynthCompression::kZstd;
    } else {
      throw std::invalid_argument("--compress must be none, gz or zst, not '" + compress + "'");
    }
    if (format == "jsonl") {
      c.format = SynthFormat::kJsonl;
    } else if (format == "lines") {
      c.format = SynthFormat::kLines;
    } else {
      throw std::invalid_argument("--format must be jsonl or lines, not '" + format + "'");
    }
    const auto start = std::chrono::steady_clock::now();
    const SynthSummary s = write_synth_corpus(c);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << "synth: " << s.records << " records ("
         << s.unique_keys << " unique keys, " << s.duplicates << " duplicates) in " << s.files
         << " files, " << static_cast<double>(s.file_bytes) / 1e6 << " MB on disk (" << format
         << '/' << compress << ", " << static_cast<double>(s.bytes) / 1e6
         << " MB uncompressed), seed " << c.seed << " -> " << c.out_dir << " in " << secs << " s\n";
    std::cout << line.str();
    return kExitOk;
  } catch (const po::error& e) {
    std::cerr << "bloomshard synth: bad option: " << e.what() << '\n';
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << "bloomshard synth: " << e.what() << '\n';
    return kExitUsage;
  }
}

}  // namespace bloomshard::app
