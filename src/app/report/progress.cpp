#include "app/report/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <string>

namespace bloomshard::app {
namespace {

// A bar is redrawn this often: fast enough to look live, slow enough that
// the terminal (or mpirun's forwarding of it) costs nothing measurable.
constexpr double kBarSeconds = 0.5;

struct Rates {
  double rate = 0;  // records per second
  double dup = 0;   // percent of records dropped
  double done = 0;  // fraction of input bytes read
  std::string eta = "?";
};

Rates rates_of(const ProgressSnapshot& s, double elapsed) {
  Rates r;
  r.rate = elapsed > 0 ? static_cast<double>(s.records) / elapsed : 0.0;
  r.dup = s.records ? 100.0 * static_cast<double>(s.dropped) / static_cast<double>(s.records) : 0.0;
  r.done = s.input_bytes_total
               ? static_cast<double>(s.input_bytes_done) / static_cast<double>(s.input_bytes_total)
               : 0.0;
  char eta[32];
  if (r.done > 0.0 && r.done < 1.0) {
    std::snprintf(eta, sizeof eta, "%.0fs", elapsed * (1.0 - r.done) / r.done);
    r.eta = eta;
  } else if (r.done >= 1.0) {
    r.eta = "0s";
  }
  return r;
}

// "1.2M"-style counts for the narrow bar.
std::string short_count(double v) {
  char text[32];
  if (v >= 1e9) {
    std::snprintf(text, sizeof text, "%.1fG", v / 1e9);
  } else if (v >= 1e6) {
    std::snprintf(text, sizeof text, "%.1fM", v / 1e6);
  } else if (v >= 1e3) {
    std::snprintf(text, sizeof text, "%.1fk", v / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f", v);
  }
  return text;
}

bool is_terminal_device(const std::filesystem::path& fd_link) {
  std::error_code ec;
  const std::string target = std::filesystem::read_symlink(fd_link, ec).string();
  return !ec && (target.starts_with("/dev/pts/") || target.starts_with("/dev/tty"));
}

}  // namespace

std::optional<ProgressStyle> parse_progress_style(std::string_view name) {
  if (name == "auto") return ProgressStyle::kAuto;
  if (name == "bar") return ProgressStyle::kBar;
  if (name == "lines") return ProgressStyle::kLines;
  return std::nullopt;
}

bool stderr_reaches_terminal() {
  if (::isatty(STDERR_FILENO) == 1) return true;
  const bool launched =
      std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
  if (!launched) return false;
  // Rank 0 normally runs beside the launcher (mpirun, or orted/slurmstepd
  // on other nodes, whose stderr is no terminal: lines there).
  return is_terminal_device("/proc/" + std::to_string(::getppid()) + "/fd/2");
}

ProgressReporter::ProgressReporter(bool enabled, double interval_seconds, ProgressStyle style,
                                   std::ostream& out)
    : interval_(enabled ? interval_seconds : 0), out_(out), start_(Clock::now()), last_(start_) {
  if (!enabled) return;
  bar_ =
      style == ProgressStyle::kBar || (style == ProgressStyle::kAuto && stderr_reaches_terminal());
  if (bar_) interval_ = kBarSeconds;
}

ProgressReporter::~ProgressReporter() { finish(); }

void ProgressReporter::maybe_report(const ProgressSnapshot& s) {
  if (interval_ <= 0) return;
  last_snapshot_ = s;
  const Clock::time_point now = Clock::now();
  if (std::chrono::duration<double>(now - last_).count() < interval_) return;
  last_ = now;
  if (bar_) {
    draw_bar(now);
  } else {
    out_ << format_line(s, std::chrono::duration<double>(now - start_).count()) << std::flush;
  }
}

void ProgressReporter::draw_bar(Clock::time_point now) {
  // Carriage return, the bar, clear to the end of the line.
  out_ << '\r' << format_bar(last_snapshot_, std::chrono::duration<double>(now - start_).count())
       << "\x1b[K" << std::flush;
}

void ProgressReporter::finish() {
  if (!bar_ || finished_) return;
  finished_ = true;
  draw_bar(Clock::now());  // the final state, also for a job shorter than one redraw
  out_ << '\n' << std::flush;
}

std::string ProgressReporter::format_line(const ProgressSnapshot& s, double elapsed) {
  const Rates r = rates_of(s, elapsed);
  char line[256];
  std::snprintf(line, sizeof line,
                "progress: %llu records, %.0f rec/s, dup %.2f%%, rejected %llu, "
                "input %.1f/%.1f MiB (%.1f%%), elapsed %.0fs, ETA %s\n",
                static_cast<unsigned long long>(s.records), r.rate, r.dup,
                static_cast<unsigned long long>(s.rejected),
                static_cast<double>(s.input_bytes_done) / 1048576.0,
                static_cast<double>(s.input_bytes_total) / 1048576.0, 100.0 * r.done, elapsed,
                r.eta.c_str());
  return line;
}

std::string ProgressReporter::format_bar(const ProgressSnapshot& s, double elapsed, int width) {
  const Rates r = rates_of(s, elapsed);
  const int filled = std::clamp(static_cast<int>(r.done * width), 0, width);
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(width - filled), '.') + "]";
  char tail[160];
  std::snprintf(tail, sizeof tail, " %5.1f%% %s rec %s rec/s dup %.1f%% ETA %s", 100.0 * r.done,
                short_count(static_cast<double>(s.records)).c_str(), short_count(r.rate).c_str(),
                r.dup, r.eta.c_str());
  return bar + tail;
}

}  // namespace bloomshard::app
