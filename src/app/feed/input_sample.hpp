// What dedup knows of its corpus before reading it, for the plan line it
// prints at start: a cheap sample of the inputs (the first kSampleBytes of
// decompressed bytes of up to kSampleFiles files: the first input, then
// inputs spread over the list) gives records per on-disk byte, record and
// key bytes and the duplicates within the sample, and from them an
// estimate of the whole corpus's records. Rank 0 only, no MPI; costs
// reading and decompressing up to kSampleFiles x kSampleBytes (tens of ms).
//
// Limits: the record estimate assumes the sampled files' record sizes and
// compression ratios hold for the others (each compression is scaled by
// its own samples when sampled; measured within 1% on synth corpora). The
// duplicate share is a lower bound: a duplicate whose first copy lies
// outside the sample is not seen (on a synth corpus with 30% duplicates
// the sample saw 9%), so distinct keys are an upper bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "app/options/dedup_options.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// Decompressed bytes read from the start of each sampled file.
inline constexpr std::size_t kSampleBytes = std::size_t{1} << 20;
/// Files sampled at most: the first input, then inputs spread over the list.
inline constexpr std::size_t kSampleFiles = 4;

struct InputSample {
  std::uint64_t files = 0;              ///< inputs sampled
  std::uint64_t inputs = 0;             ///< inputs of the job, sampled or not
  std::uint64_t records = 0;            ///< records read in the samples (rejects included)
  std::uint64_t keys = 0;               ///< of them with a key (not rejected)
  double disk_bytes = 0;                ///< on-disk bytes those records take (compressed share)
  double text_bytes = 0;                ///< their decompressed bytes (lines and terminators)
  double key_bytes = 0;                 ///< mean bytes of a key as dedup builds it
  std::uint64_t duplicates = 0;         ///< keys repeating an earlier key of the samples
  std::uint64_t estimated_records = 0;  ///< of every input: sampled counts, the rest scaled
  /// Every input of the job uncompressed (the lockstep layout reads only
  /// those: app/split/lockstep_layout.hpp).
  bool all_uncompressed = true;
  /// Duplicates / keys within the sample (0 without keys): a lower bound.
  [[nodiscard]] double duplicate_fraction() const noexcept {
    return keys ? static_cast<double>(duplicates) / static_cast<double>(keys) : 0.0;
  }
};

/// Samples `files` (in the job's input order) as dedup would read them
/// under `config`'s key scheme. An input that cannot be read ends its
/// sample where it broke (the job reports it later). Never throws for
/// input errors; estimated_records is 0 when no record was read.
[[nodiscard]] InputSample sample_inputs(const DedupConfig& config,
                                        std::span<const io::InputFile> files);

}  // namespace bloomshard::app
