// Where a job's --metrics document goes, and the metrics of a run that an
// earlier attempt finished. One writer for every command's metrics file:
// through a temporary that is fsynced and renamed, its directory fsynced, so
// a full disk leaves no empty or half file (and says so), a power cut the
// old file or the new one.
#pragma once

#include <string>

#include "app/options/dedup_options.hpp"

namespace bloomshard::app {

/// Rank 0: replaces `path` with `json` durably. Throws on failure, naming
/// the path.
void write_metrics_file(const std::string& path, const std::string& json);

/// Rank 0, on a start that finds the run finished: a kill between the
/// finishing generation and the metrics file (or a lost file) left no
/// metrics; the state's newest generation has the run's totals. A metrics
/// file already there (the run's own, from its end) is kept.
void write_metrics_of_finished_run(const DedupConfig& config);

}  // namespace bloomshard::app
