// Progress on rank 0, in one of two styles. Lines: one plain line every
// --progress seconds (records, rate, duplicate %, input bytes done / total,
// ETA), newlines only, so Slurm logs stay readable. Bar: one live line
// redrawn in place about twice a second, for a person at a terminal; the
// default when rank 0's stderr reaches a terminal (stderr_reaches_terminal).
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace bloomshard::app {

/// Job-wide counts at one round boundary.
struct ProgressSnapshot {
  std::uint64_t records = 0;
  std::uint64_t dropped = 0;
  std::uint64_t rejected = 0;
  std::uint64_t input_bytes_done = 0;
  std::uint64_t input_bytes_total = 0;
};

enum class ProgressStyle : std::uint8_t {
  kAuto,   ///< kBar when stderr reaches a terminal, else kLines
  kBar,    ///< live bar redrawn in place (carriage return), ~2 per second
  kLines,  ///< a plain line every --progress seconds (0: none)
};

/// Parses "auto", "bar" or "lines"; nullopt for anything else.
[[nodiscard]] std::optional<ProgressStyle> parse_progress_style(std::string_view name);

/// True when this process's stderr is a terminal, or when it is a pipe of an
/// MPI launcher (Open MPI, Slurm: OMPI_COMM_WORLD_SIZE or PMIX_RANK set)
/// whose own stderr is a terminal (the launcher forwards ours to it). Open
/// MPI gives every rank a pseudo-terminal as stdout even when mpirun's
/// output goes to a file, so stdout says nothing and is not looked at.
[[nodiscard]] bool stderr_reaches_terminal();

class ProgressReporter {
 public:
  /// Lines every `interval_seconds` (<= 0: none) or a bar, as `style` and
  /// the terminal decide; `enabled` false (ranks other than 0) prints nothing.
  ProgressReporter(bool enabled, double interval_seconds, ProgressStyle style, std::ostream& out);
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;
  /// As finish().
  ~ProgressReporter();

  /// Prints a line, or redraws the bar, if its interval has passed.
  void maybe_report(const ProgressSnapshot& s);

  /// Draws the bar a last time (the final counts) and ends its line, so that
  /// what follows (the summary) starts on a line of its own. Idempotent;
  /// nothing for lines. Call it before the job's last messages.
  void finish();

  [[nodiscard]] bool bar() const noexcept { return bar_; }

  /// The line for `s` after `elapsed` seconds (exposed for tests).
  [[nodiscard]] static std::string format_line(const ProgressSnapshot& s, double elapsed);

  /// The bar for `s` after `elapsed` seconds, `width` characters of bar,
  /// without the leading carriage return (exposed for tests).
  [[nodiscard]] static std::string format_bar(const ProgressSnapshot& s, double elapsed,
                                              int width = 30);

 private:
  using Clock = std::chrono::steady_clock;
  void draw_bar(Clock::time_point now);

  double interval_;
  bool bar_ = false;
  bool finished_ = false;
  ProgressSnapshot last_snapshot_;
  std::ostream& out_;
  Clock::time_point start_;
  Clock::time_point last_;
};

}  // namespace bloomshard::app
