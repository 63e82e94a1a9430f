#include "app/run/run_state.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "app/cli/exit_codes.hpp"
#include "app/feed/input_windows.hpp"
#include "app/guard/output_guard.hpp"
#include "app/guard/output_presence.hpp"
#include "app/run/run_manifest.hpp"
#include "app/state/state_key_scheme.hpp"
#include "app/state/window_slots.hpp"
#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/normalize.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {
namespace fs = std::filesystem;

std::string revalidate_consumed_prefix(const InputProgress& then, const io::InputFile& now) {
  // A lockstep cut saves none (docs/inputs.md "The lockstep layout").
  if (!then.prefix_digest) {
    return "the checkpoint holds no digest of what was read (an older version, or an input read "
           "in the lockstep layout, which saves none)";
  }
  try {
    io::RecordReader reader;
    reader.open(now);
    io::Record r;
    while (reader.cursor().records < then.cursor.records) {
      if (!reader.next(r)) return "it now ends after " + std::to_string(reader.cursor().records);
    }
    // Records and offset; the frame start is not compared (older builds
    // saved none, and a recompressed file has other frames).
    const io::InputCursor at = reader.cursor();
    if (at.records != then.cursor.records ||
        at.decompressed_offset != then.cursor.decompressed_offset ||
        reader.prefix_digest() != *then.prefix_digest) {
      return "its first " + std::to_string(then.cursor.records) +
             " records are not the ones read before";
    }
  } catch (const std::exception& e) {
    return std::string("it cannot be read up to the cursor: ") + e.what();
  }
  return {};
}

namespace {

// "was split into byte ranges" refusal: its ranges were cut from the old
// bytes, so no prefix check makes them valid again.
std::string split_refusal(const InputProgress& p, const std::string& what) {
  return "input '" + p.file.relative_path + "' was split into byte ranges and " + what +
         "; a split input cannot be revalidated";
}

bool input_started(const InputProgress& p) {
  if (p.done || p.cursor.records > 0 || p.cursor.decompressed_offset > 0) return true;
  return std::any_of(p.ranges.begin(), p.ranges.end(),
                     [](const RangeProgress& r) { return r.done || r.cursor.records > 0; });
}

std::string records_read(const InputProgress& p) {
  return std::to_string(p.cursor.records) + " record" + (p.cursor.records == 1 ? "" : "s");
}

// A started input whose bytes may differ from those read (`change` says
// how it was found): refused, or with `revalidate` accepted when the
// records read from it are the same. A finished (or skipped) input that
// passes is read on after its cursor: the appended records are new.
std::string accept_changed_started(InputProgress& p, const io::InputFile& f,
                                   const std::string& change, const RevalidateFn* revalidate,
                                   std::vector<std::string>& notes) {
  if (!p.ranges.empty()) return split_refusal(p, change);
  const std::string subject = "input '" + f.relative_path + "' " + change;
  if (revalidate == nullptr) {
    return subject + (p.done ? "; its new records would never be read" : "") +
           " (--revalidate-inputs checks whether the " + records_read(p) + " read are unchanged" +
           (p.done ? " and reads what was appended after them)" : ")");
  }
  if (std::string why = (*revalidate)(p, f); !why.empty()) {
    return subject + " and cannot be revalidated: " + why;
  }
  std::string note =
      subject + "; revalidated: the records read so far are the same (" + records_read(p) + ")";
  if (p.done) {
    note += p.skipped.empty() ? "; the records appended after them are read now"
                              : "; it was skipped there (" + p.skipped + "), reading goes on now";
    p.done = false;
    p.skipped.clear();
  } else {
    note += ", reading goes on after them";
  }
  notes.push_back(std::move(note));
  p.file = f;
  // The same records, but perhaps not the same compressed bytes (a
  // recompressed copy): the saved frame start may point elsewhere, so
  // this resume decompresses from byte 0.
  p.cursor.frame.reset();
  p.window.reset();
  return {};
}

}  // namespace

std::string iso_utc(std::int64_t ns) {
  const std::int64_t sec = ns >= 0 ? ns / 1'000'000'000 : (ns - 999'999'999) / 1'000'000'000;
  const auto frac = static_cast<long>(ns - sec * 1'000'000'000);
  const auto t = static_cast<std::time_t>(sec);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

std::string describe_file_change(const io::InputFile& then, const io::InputFile& now) {
  std::string out =
      "size " + std::to_string(then.size) + " -> " + std::to_string(now.size) + " bytes";
  if (now.size > then.size) {
    out += " (grew by " + std::to_string(now.size - then.size) + ")";
  } else if (now.size < then.size) {
    out += " (shrank by " + std::to_string(then.size - now.size) + ")";
  } else {
    out += " (same size)";
  }
  out += ", mtime " + iso_utc(then.mtime_ns);
  out += then.mtime_ns == now.mtime_ns ? " (same)" : " -> " + iso_utc(now.mtime_ns);
  return out;
}

InputChanges reconcile_inputs(RunManifest& m, std::span<const io::InputFile> inputs,
                              const RevalidateFn* revalidate, const WindowCheckFn* windows) {
  InputChanges out;
  std::map<std::string, const io::InputFile*, std::less<>> now;
  for (const io::InputFile& f : inputs) now.emplace(f.relative_path, &f);
  std::vector<InputProgress> kept;
  bool checked_by_size_only = false;
  for (InputProgress& p : m.inputs) {
    const bool started = input_started(p);
    const auto it = now.find(p.file.relative_path);
    if (it == now.end()) {
      if (!started) {
        out.notes.push_back("input '" + p.file.relative_path +
                            "' was removed before it was started; the run goes on without it");
        continue;
      }
      if (p.done) {
        out.notes.push_back("input '" + p.file.relative_path +
                            "' was removed after it was finished; nothing of it is read again");
      } else {
        // The user's way of giving up on a broken input: like a skip.
        p.done = true;
        p.skipped = "removed by the user before it was finished";
        out.notes.push_back("input '" + p.file.relative_path + "' was removed after " +
                            std::to_string(p.cursor.records) +
                            " records; they count, the rest is recorded as skipped");
      }
      kept.push_back(std::move(p));
      continue;
    }
    const io::InputFile& f = *it->second;
    now.erase(it);
    const char* when = p.done ? "after it was finished" : "after some of its records were read";
    std::string refusal;
    if (f.size != p.file.size || f.mtime_ns != p.file.mtime_ns) {
      if (!p.ranges.empty()) {  // cut from the old bytes, started or not
        refusal = split_refusal(p, std::string("changed ") +
                                       (p.done ? "after it was finished" : "before all were read") +
                                       " (" + describe_file_change(p.file, f) + ")");
      } else if (!started) {
        out.notes.push_back("input '" + f.relative_path +
                            "' changed before it was started; its new content is read");
        p.file = f;
      } else {
        const std::string change =
            std::string("changed ") +
            (p.done ? "after it was finished"
                    : "after " + std::to_string(p.cursor.records) + " of its records were read") +
            " (" + describe_file_change(p.file, f) + ")";
        refusal = accept_changed_started(p, f, change, revalidate, out.notes);
      }
    } else if (started && m.input_windows_version == 0) {
      checked_by_size_only = true;  // an older checkpoint: no windows saved
    } else if (started && windows != nullptr && p.window) {
      if (std::string why = (*windows)(p, f); !why.empty()) {
        const std::string change =
            std::string("was replaced ") + when + ": its size and mtime are the saved ones (" +
            std::to_string(f.size) + " bytes, " + iso_utc(f.mtime_ns) + ") but " + why;
        refusal = accept_changed_started(p, f, change, revalidate, out.notes);
      }
    }
    if (!refusal.empty()) {
      out.refusal = std::move(refusal);
      return out;
    }
    kept.push_back(std::move(p));
  }
  if (!now.empty()) {
    out.refusal = "input '" + now.begin()->first + "' is not part of the run";
    return out;
  }
  if (checked_by_size_only) {
    out.notes.push_back(
        "the checkpoint was written before window digests (its manifest has no input_windows): "
        "its started inputs are checked by size and mtime only");
  }
  m.inputs = std::move(kept);
  return out;
}

std::string normalization_identity(const DedupConfig& config) {
  return normalization_identity(config.key);
}

std::string run_identity(const DedupConfig& config, std::span<const io::InputFile> inputs) {
  std::string canon = fs::absolute(config.output_dir).lexically_normal().string();
  canon += '\0' + core::key_fields_text(config.key) + '\0' + normalization_identity(config) + '\0' +
           std::to_string(config.hash_seed) + '\0';
  // Filter runs add nothing (their identity is what earlier builds gave them);
  // an annotate run is another run than a filter run of the same inputs.
  if (config.annotate.mode != RunMode::kFilter) canon += run_mode_label(config.annotate) + '\0';
  // Legacy schemes add nothing, so a run's identity is what earlier builds gave it.
  if (const std::string scheme = core::key_scheme_attribute(config.key); !scheme.empty()) {
    canon += scheme + '\0';
  }
  for (const auto& f : inputs) {
    canon +=
        f.relative_path + '\0' + std::to_string(f.size) + '\0' + std::to_string(f.mtime_ns) + '\0';
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(canon.data(), canon.size())));
  return hex;
}

std::string foreign_generation(const StartPlan& plan, std::uint64_t g, const std::string& run_id,
                               bool finished) {
  if (run_id == plan.base_run_id && finished == plan.base_finished) return {};
  const auto state = [](bool f) { return f ? "finished" : "unfinished"; };
  return "generation " + std::to_string(g) + " skipped: it holds " + state(finished) + " run " +
         run_id + ", this start continues " + state(plan.base_finished) + " run " +
         plan.base_run_id + " (never another run's state)";
}

std::string one_line(std::string_view text) {
  // A store error may list every bad slice (thousands): keep the first
  // kMaxChars and say how much was left out; `bloomshard verify` lists all.
  constexpr std::size_t kMaxChars = 400;
  std::size_t lines = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) lines += text[i] == '\n';
  std::string_view first = text.substr(0, text.find('\n'));
  std::string out(first.substr(0, kMaxChars));
  const std::size_t cut = text.size() - out.size();
  if (first.size() > kMaxChars) out += "...";
  if (cut > 0 && (lines > 0 || first.size() > kMaxChars)) {
    out += " (+" + std::to_string(cut) + " more characters";
    if (lines > 0) out += ", " + std::to_string(lines) + " more lines";
    out += "; `bloomshard verify --state DIR` lists all)";
  }
  return out;
}

std::string encode_plan(const StartPlan& plan) {
  std::string out =
      std::to_string(static_cast<int>(plan.kind)) + '\n' + plan.run_id + '\n' +
      std::to_string(plan.num_slices) + '\n' + (plan.base_run_id.empty() ? "-" : plan.base_run_id) +
      ' ' + (plan.base_finished ? '1' : '0') + ' ' +
      std::to_string(static_cast<int>(plan.normalize)) + ' ' + (plan.origins ? '1' : '0') + '\n';
  for (const std::uint64_t g : plan.candidates) out += std::to_string(g) + ' ';
  return out;
}

StartPlan decode_plan(std::string_view bytes) {
  std::istringstream in{std::string(bytes)};
  StartPlan plan;
  int kind = 0;
  int base_finished = 0;
  int normalize = 0;
  int origins = 0;
  in >> kind >> plan.run_id >> plan.num_slices >> plan.base_run_id >> base_finished >> normalize >>
      origins;
  plan.origins = origins != 0;
  if (plan.base_run_id == "-") plan.base_run_id.clear();
  plan.base_finished = base_finished != 0;
  plan.kind = static_cast<StartKind>(kind);
  plan.normalize = static_cast<core::NormalizePolicy>(normalize);
  std::uint64_t g = 0;
  while (in >> g) plan.candidates.push_back(g);
  return plan;
}

}  // namespace bloomshard::app
