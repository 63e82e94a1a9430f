#include "app/feed/input_sample.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "bloomshard/core/key_builder.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "io/records/byte_source.hpp"
#include "io/records/key_extractor.hpp"

namespace bloomshard::app {
namespace {

struct FileSample {
  std::uint64_t records = 0;
  std::uint64_t keys = 0;
  double key_bytes = 0;   // summed over keys
  double disk_bytes = 0;  // on-disk bytes of the records read
  double text_bytes = 0;  // their decompressed bytes
  bool whole = false;     // the file ended inside the sample: records is exact
};

// Decompressed bytes asked of the decoder at a time: small against a codec
// block, so the compressed offset is seen moving between blocks.
constexpr std::size_t kSampleReadBytes = std::size_t{16} << 10;

struct HashOfKey {
  std::size_t operator()(const core::KeyHash& h) const noexcept {
    return static_cast<std::size_t>(h.lo);
  }
};
using SeenKeys = std::unordered_set<core::KeyHash, HashOfKey>;

// The first kSampleBytes decompressed bytes of `file`, cut after their last
// complete line (or at the end of a shorter file).
struct SampleText {
  std::string bytes;
  double disk_bytes = 0;
  bool whole = false;
};

SampleText read_head(const io::InputFile& file) {
  SampleText t;
  t.bytes.resize(kSampleBytes);
  std::size_t got = 0;
  // A decoder takes its input a codec block at a time (zstd: up to 128 KiB
  // of output) before it hands out that block's bytes, so its compressed
  // offset runs up to a block ahead of the bytes read. Just before the
  // offset moves, the bytes handed out and the input taken match: that
  // last such pair gives the compression ratio.
  std::uint64_t compressed = 0;
  std::uint64_t anchor_compressed = 0;
  std::size_t anchor_got = 0;
  try {
    const std::unique_ptr<io::ByteSource> source =
        io::open_byte_source(file.absolute_path, file.compression);
    while (got < kSampleBytes) {
      const std::size_t want = std::min(kSampleReadBytes, kSampleBytes - got);
      const std::size_t n = source->read(std::span<char>(t.bytes.data() + got, want));
      const std::uint64_t now = source->compressed_offset();
      if (now != compressed && got > 0 && compressed > 0) {
        anchor_compressed = compressed;
        anchor_got = got;
      }
      compressed = now;
      if (n == 0) {
        t.whole = true;
        break;
      }
      got += n;
    }
  } catch (const std::exception&) {
    // A broken input: its records before the damage are the sample (the
    // job reports the damage when it reads there).
    t.whole = false;
  }
  t.bytes.resize(got);
  std::size_t used = got;
  if (!t.whole) {
    const std::size_t last_newline = t.bytes.rfind('\n');
    used = last_newline == std::string::npos ? 0 : last_newline + 1;
    t.bytes.resize(used);
  }
  if (t.whole && compressed > 0) {
    t.disk_bytes = static_cast<double>(file.size);
  } else if (file.compression == io::Compression::kNone) {
    t.disk_bytes = static_cast<double>(used);
  } else if (anchor_got > 0) {
    t.disk_bytes = static_cast<double>(anchor_compressed) * static_cast<double>(used) /
                   static_cast<double>(anchor_got);
  } else if (got > 0) {
    t.disk_bytes =
        static_cast<double>(compressed) * static_cast<double>(used) / static_cast<double>(got);
  }
  return t;
}

// Reads the sample of `file`: every key's hash goes into `seen`, and a key
// already there counts in `duplicates`.
FileSample sample_file(const DedupConfig& config, const io::InputFile& file, SeenKeys& seen,
                       std::uint64_t& duplicates) {
  FileSample s;
  const SampleText text = read_head(file);
  s.whole = text.whole;
  s.disk_bytes = text.disk_bytes;
  s.text_bytes = static_cast<double>(text.bytes.size());
  // Whole values: the sample measures key sizes, it never streams a digest.
  io::KeyExtractor extractor(extractor_options(config, file.format, false));
  core::KeyBuilder builder(config.key);
  const std::uint64_t seed = config.hash_seed != 0 ? config.hash_seed : core::kDefaultHashSeed;
  std::string_view rest = text.bytes;
  while (!rest.empty()) {
    const std::size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    ++s.records;
    const io::FieldsResult fields = extractor.extract_fields(line);
    if (!fields.ok()) continue;
    std::string_view key;
    try {
      key = builder.build(fields.values);
    } catch (const std::exception&) {
      continue;  // invalid UTF-8 under a policy that needs it: a reject
    }
    ++s.keys;
    s.key_bytes += static_cast<double>(key.size());
    if (!seen.insert(core::hash_key(key, seed)).second) ++duplicates;
  }
  return s;
}

// The first input, then inputs spread evenly over the list.
std::vector<std::size_t> files_to_sample(std::size_t n) {
  std::vector<std::size_t> picks;
  for (std::size_t i = 0; i < std::min(n, kSampleFiles); ++i) {
    const std::size_t at = i * n / std::min(n, kSampleFiles);
    if (picks.empty() || picks.back() != at) picks.push_back(at);
  }
  return picks;
}

}  // namespace

InputSample sample_inputs(const DedupConfig& config, std::span<const io::InputFile> files) {
  InputSample out;
  out.inputs = files.size();
  out.all_uncompressed = std::all_of(files.begin(), files.end(), [](const io::InputFile& f) {
    return f.compression == io::Compression::kNone;
  });
  struct Rate {
    double records = 0;
    double disk_bytes = 0;
  };
  std::map<io::Compression, Rate> by_compression;
  Rate all;
  std::vector<std::optional<FileSample>> sampled(files.size());
  double key_bytes = 0;
  SeenKeys seen;  // across the samples: a duplicate's first copy may lie in another file's
  for (const std::size_t i : files_to_sample(files.size())) {
    const FileSample s = sample_file(config, files[i], seen, out.duplicates);
    ++out.files;
    out.records += s.records;
    out.keys += s.keys;
    out.disk_bytes += s.disk_bytes;
    out.text_bytes += s.text_bytes;
    key_bytes += s.key_bytes;
    Rate& r = by_compression[files[i].compression];
    r.records += static_cast<double>(s.records);
    r.disk_bytes += s.disk_bytes;
    all.records += static_cast<double>(s.records);
    all.disk_bytes += s.disk_bytes;
    sampled[i] = s;
  }
  if (out.keys > 0) out.key_bytes = key_bytes / static_cast<double>(out.keys);
  if (out.records == 0) return out;
  double estimate = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (sampled[i] && sampled[i]->whole) {
      estimate += static_cast<double>(sampled[i]->records);
      continue;
    }
    const auto kind = by_compression.find(files[i].compression);
    const Rate& r =
        kind != by_compression.end() && kind->second.disk_bytes > 0 ? kind->second : all;
    if (r.disk_bytes > 0) estimate += static_cast<double>(files[i].size) * r.records / r.disk_bytes;
  }
  out.estimated_records = static_cast<std::uint64_t>(std::llround(estimate));
  return out;
}

}  // namespace bloomshard::app
