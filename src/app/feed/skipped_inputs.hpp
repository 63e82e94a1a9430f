// Broken inputs under --on-input-error skip: which input broke, where (the
// first record and decompressed byte not read) and why. The records before
// the damage count and are written once; the rest of the file is skipped
// for good (the manifest marks the input done, so no resume reads it). The
// list is gathered from every rank for the manifest, the metrics JSON
// (`skipped_inputs`) and the summary line.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "app/run/run_manifest.hpp"
#include "comm/communicator.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {

struct SkippedInput {
  std::size_t index = 0;  ///< position in the job's input list
  std::string file;       ///< relative path
  io::InputCursor at;     ///< records read before the damage; byte where skipping starts
  std::string reason;     ///< the reader's reason, without the location
};

/// Collective: every rank's skipped inputs, on every rank, sorted by index.
/// One allreduce when no rank skipped anything, plus one broadcast per rank
/// otherwise (checkpoints and the end of the job only).
[[nodiscard]] std::vector<SkippedInput> gather_skipped_inputs(const comm::Communicator& comm,
                                                              std::span<const SkippedInput> mine);

/// The inputs `m` records as skipped (earlier segments of a resumed run).
[[nodiscard]] std::vector<SkippedInput> skipped_in_manifest(const RunManifest& m);

/// Marks `skipped` in the manifest's inputs (their cursor and done flag come
/// with the other per-input fields).
void mark_skipped_inputs(RunManifest& m, std::span<const SkippedInput> skipped);

/// "'a/b.jsonl.gz' from record 301 (decompressed byte 12345): <reason>".
[[nodiscard]] std::string describe_skip(const SkippedInput& s);

}  // namespace bloomshard::app
