// Generation bookkeeping of a state directory, pure filesystem (not
// collective): generation files ckpt-<g>.h5, the LATEST pointer (the
// decimal generation and a newline), durable replacement of LATEST and
// pruning of old generations. Resume tries resume_candidates() in order
// and takes the first file that loads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bloomshard::io {

/// <state_dir>/ckpt-<g>.h5
[[nodiscard]] std::filesystem::path generation_path(const std::filesystem::path& state_dir,
                                                    std::uint64_t g);
/// The generation LATEST names, or nullopt if LATEST is missing or is not a
/// decimal number (optionally followed by a newline). Does not check that
/// the generation's file exists.
[[nodiscard]] std::optional<std::uint64_t> read_latest(const std::filesystem::path& state_dir);
/// Generations whose file ckpt-<g>.h5 exists (no .tmp), newest first; empty
/// if the directory does not exist.
[[nodiscard]] std::vector<std::uint64_t> list_generations(const std::filesystem::path& state_dir);
/// Generations to try on resume: LATEST's if its file exists, then every
/// other existing generation, newest first.
[[nodiscard]] std::vector<std::uint64_t> resume_candidates(const std::filesystem::path& state_dir);

/// <state_dir>/run-<id / 2^32>-<id % 2^32 as 8 hex digits>.h5: a tier-2 run
/// file (format 2); the high half of an id is the generation that wrote it,
/// the low half a random tag, so a rewrite of a generation number never
/// reuses the name of a run an older generation references.
[[nodiscard]] std::filesystem::path run_path(const std::filesystem::path& state_dir,
                                             std::uint64_t id);
/// Run files in the state dir (committed and .tmp leftovers): their paths.
[[nodiscard]] std::vector<std::filesystem::path> list_run_files(
    const std::filesystem::path& state_dir);
/// The run id of a file name made by run_path (also "<name>.tmp"), if any.
[[nodiscard]] std::optional<std::uint64_t> run_id_of(const std::filesystem::path& file);

/// fsyncs a file or directory; throws CheckpointError naming it.
void fsync_path(const std::filesystem::path& path);
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
