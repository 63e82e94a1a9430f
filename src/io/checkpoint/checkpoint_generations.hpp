// Generation bookkeeping of a state directory, pure filesystem (not
// collective), write side: durable replacement of LATEST, pruning of old
// generations and of stale temporaries. The names and listings (ckpt-<g>.h5,
// run files, LATEST) are the store's (store/state_dir.hpp), here under
// their io names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bloomshard/store/state_dir.hpp"

namespace bloomshard::io {

using store::generation_path;
using store::list_generations;
using store::list_run_files;
using store::read_latest;
using store::resume_candidates;
using store::run_id_of;
using store::run_path;

/// Durably replaces LATEST with `g`: writes LATEST.tmp, fsyncs, renames,
/// fsyncs the directory. Throws CheckpointError.
void write_latest(const std::filesystem::path& state_dir, std::uint64_t g);
/// Deletes generation files (and stale .tmp files) older than the newest
/// `keep` generations that are <= `newest`; never touches newer ones.
/// Returns the generations deleted. Throws CheckpointError on failure.
std::vector<std::uint64_t> prune_generations(const std::filesystem::path& state_dir,
                                             std::uint64_t newest, int keep);

/// Deletes the temporaries of writes that never committed: ckpt-<g>.h5.tmp,
/// run-<id>.h5.tmp (run_path's names), LATEST.tmp and .reserve.tmp; no
/// other name is touched. Call only while no attempt can be writing (the
/// run's lock held, before this attempt's first checkpoint): a killed
/// attempt's leftovers then never outlive the next start, so a finished
/// state holds no temporary file whatever moment the kills came at.
/// Returns the paths deleted; throws CheckpointError naming one that
/// cannot be deleted.
std::vector<std::filesystem::path> remove_stale_temporaries(const std::filesystem::path& state_dir);

/// Not collective: runs prune_generations(state_dir, newest, keep) on a
/// background thread, after waiting for the previous background prune of
/// this process (one at a time). Deleting a multi-GB generation took 1.3 s
/// on our ext4 (mounted with `discard`), which a job's next rounds now hide.
/// A failure is kept for wait_for_background_prune(), never thrown: an old
/// generation left behind is deleted by a later prune. `also_delete` (run
/// files no kept generation references) are deleted after the generations.
void prune_generations_in_background(const std::filesystem::path& state_dir, std::uint64_t newest,
                                     int keep, std::vector<std::filesystem::path> also_delete = {});

/// Not collective: waits for this process's background prune, if any, and
/// returns its error message (empty when it succeeded or none ran). Process
/// exit waits too (a static's destructor).
std::string wait_for_background_prune();

}  // namespace bloomshard::io
