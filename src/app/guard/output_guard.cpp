#include "app/guard/output_guard.hpp"

#include <fstream>
#include <system_error>

#include "app/cli/exit_codes.hpp"
#include "app/guard/path_preflight.hpp"
#include "app/report/json_writer.hpp"
#include "app/run/run_lease.hpp"
#include "app/split/split_inputs.hpp"
#include "io/durable/durable_entries.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {
namespace fs = std::filesystem;
namespace {

// Relative output paths a previous run listed in its marker (one per line
// after the first "outputs" line; see write_marker).
std::vector<std::string> previous_outputs(const fs::path& marker) {
  std::vector<std::string> out;
  std::ifstream in(marker.string() + ".list");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

void write_marker(const fs::path& output_dir, std::span<const io::InputFile> inputs) {
  JsonWriter json;
  json.begin_object();
  json.value("tool", "bloomshard");
  json.value("outputs", static_cast<std::uint64_t>(inputs.size()));
  json.value("rejects_dir", kRejectsDirName);
  json.end_object();
  const fs::path marker = output_dir / kRunMarkerName;
  // The list of mirrored paths lives beside the marker, one per line, so a
  // later --overwrite can remove exactly these files.
  std::string list;
  for (const auto& f : inputs) list += f.relative_path + '\n';
  // Each through a temporary, fsynced, renamed, its directory fsynced: a
  // power cut leaves the old file or the new one, never a torn one.
  io::replace_file_durably(marker.string() + ".list", list);
  io::replace_file_durably(marker, json.str());
}

// An output dir whose only entry is the run's lock file (taken before this
// check, see run_lease.hpp) is as good as empty.
bool holds_only_lock(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename() != kOutputLockName) return false;
  }
  return true;
}

}  // namespace

bool output_dir_in_use(const fs::path& output_dir) {
  return fs::is_directory(output_dir) && !holds_only_lock(output_dir);
}

std::string not_empty_refusal(const fs::path& output_dir, const fs::path& state_dir) {
  const std::string dir = "output dir '" + output_dir.string() + "'";
  if (fs::exists(output_dir / kRunMarkerName) && !state_dir.empty()) {
    // This job's state holds no checkpoint of the run that wrote there (or
    // another run's): continuing those outputs would take that run's state.
    return dir + " holds the outputs of an earlier run (" + kRunMarkerName +
           ") that the state in '" + state_dir.string() +
           "' did not write: resume that run with the --state it was started with, pass "
           "--overwrite to replace its outputs and start again, or choose an empty dir";
  }
  if (fs::exists(output_dir / kRunMarkerName)) {
    // Our own marker: an earlier run wrote here. Without --state nothing
    // of it was saved, so it cannot go on; say both ways forward.
    return dir + " holds the outputs of an earlier run (" + kRunMarkerName +
           ") that cannot be continued here (a run without --state saves nothing to resume "
           "from): pass --overwrite to replace them and start again, or choose an empty dir; "
           "for dedup, --state DIR makes a later stop resumable";
  }
  return dir + " is not empty and holds no bloomshard run's marker (" + kRunMarkerName +
         "): choose an empty or new dir, or pass --overwrite to write beside those files";
}

OutputCheck check_output_dir(const fs::path& output_dir, std::span<const fs::path> input_args,
                             std::span<const io::InputFile> inputs, bool overwrite,
                             const fs::path& state_dir) {
  try {
    if (std::string why = overlap_with_inputs("output dir", output_dir, input_args); !why.empty()) {
      return {why, kExitUsage};
    }
    for (const auto& f : inputs) (void)io::output_path_for(output_dir, f.relative_path);
    const bool exists = fs::exists(output_dir);
    if (exists && !fs::is_directory(output_dir)) {
      return {"output '" + output_dir.string() + "' exists and is not a directory", kExitUsage};
    }
    if (exists && !holds_only_lock(output_dir) && !overwrite) {
      return {not_empty_refusal(output_dir, state_dir), kExitOutputInUse};
    }
  } catch (const std::exception& e) {
    return {std::string("cannot prepare output dir: ") + e.what(), kExitFailure};
  }
  return {};
}

OutputCheck prepare_output_dir(const fs::path& output_dir, std::span<const fs::path> input_args,
                               std::span<const io::InputFile> inputs, bool overwrite) {
  if (OutputCheck check = check_output_dir(output_dir, input_args, inputs, overwrite);
      !check.error.empty()) {
    return check;
  }
  try {
    if (fs::exists(output_dir) && !holds_only_lock(output_dir)) {
      const fs::path marker = output_dir / kRunMarkerName;
      for (const auto& rel : previous_outputs(marker)) {
        fs::remove(io::output_path_for(output_dir, rel));
      }
      fs::remove_all(output_dir / kRejectsDirName);
      fs::remove_all(output_dir / kRangesDirName);  // parts of split inputs
      fs::remove(marker.string() + ".list");
      fs::remove(marker);
    }
    // Durable entries (the output dir too, when the run lease did not
    // already create it durably): checkpoints record files inside them.
    io::create_directories_durably(output_dir / kRejectsDirName);
    write_marker(output_dir, inputs);
  } catch (const std::exception& e) {
    return {std::string("cannot prepare output dir: ") + e.what(), kExitFailure};
  }
  return {};
}

}  // namespace bloomshard::app
