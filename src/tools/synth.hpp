// `bloomshard synth`: writes a deterministic synthetic corpus with a known
// number of duplicate keys, the ground truth the end-to-end tests and the
// benchmarks check the dedup job against. Same options + same seed give the
// same bytes on every machine (own PRNG, no std:: distributions).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomshard::app {

/// Thrown for I/O failures while writing a corpus.
class SynthError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class SynthCompression : std::uint8_t { kNone, kGzip, kZstd };
enum class SynthFormat : std::uint8_t { kJsonl, kLines };

struct SynthConfig {
  std::uint64_t records = 0;
  double dup_rate = 0.0;    ///< in [0, 1); round(records * dup_rate) records repeat a key
  std::uint32_t files = 1;  ///< 1 .. 99999; every 4th file goes into DIR/nested/
  std::string out_dir;
  SynthCompression compression = SynthCompression::kNone;
  SynthFormat format = SynthFormat::kJsonl;
  std::uint64_t seed = 1;        ///< keys embed the seed: corpora with other seeds share no key
  std::string key_field = "id";  ///< dotted path ("meta.id") writes a nested object
  /// Where SYNTH.json goes; empty: out_dir/SYNTH.json. The dedup job reads
  /// every file of its input tree, so point this elsewhere to keep the
  /// manifest out of the corpus.
  std::string manifest;
};

struct SynthSummary {
  std::uint64_t records = 0;
  std::uint64_t unique_keys = 0;
  std::uint64_t duplicates = 0;
  std::uint32_t files = 0;
  std::uint64_t bytes = 0;       ///< uncompressed bytes written
  std::uint64_t file_bytes = 0;  ///< the part files' size on disk (compressed, if so)
};

/// Writes the corpus (part-NNNNN.{jsonl|txt}[.gz|.zst]) into config.out_dir,
/// creating it, and the manifest {records, unique_keys, duplicates, files,
/// seed, bytes (uncompressed), file_bytes (on disk), ...} as JSON. Throws std::invalid_argument for
/// a config that cannot be met and SynthError for I/O failures. About 0.3 s per million
/// uncompressed JSONL records on one core; memory is O(files).
SynthSummary write_synth_corpus(const SynthConfig& config);

/// `bloomshard synth` over its arguments (without the command word); prints
/// a one-line summary and returns an exit code (kExitUsage for bad options).
int run_synth(const std::vector<std::string>& args);

}  // namespace bloomshard::app
