#include "app/state/window_slots.hpp"

#include <stdexcept>
#include <vector>

namespace bloomshard::app {

core::WindowSpec parse_window_options(std::uint32_t window, std::uint64_t slot_records,
                                      const std::string& slot_every) {
  core::WindowSpec w;
  if (window == 0) {
    if (slot_records != 0 || !slot_every.empty()) {
      throw std::invalid_argument("--slot-records/--slot-every need --window");
    }
    return w;
  }
  if (slot_records != 0 && !slot_every.empty()) {
    throw std::invalid_argument("--slot-records and --slot-every exclude each other");
  }
  w.window = window;
  if (slot_records != 0) {
    w.rule = core::SlotRule::kRecords;
    w.every = slot_records;
  } else if (!slot_every.empty()) {
    w.rule = core::SlotRule::kWallSeconds;
    try {
      w.every = core::parse_duration_seconds(slot_every);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--slot-every: ") + e.what());
    }
  }
  core::check_window(w);
  return w;
}

std::string window_refusal(const io::CheckpointHeader& h, const core::WindowSpec& job) {
  if (h.window.empty()) {
    if (job.window == 0) return {};
    return "the state has no window (its keys carry no slot), this job asks for " +
           core::describe_window(job) + "; use a new --state for a windowed history";
  }
  core::WindowSpec state;
  try {
    state = core::parse_window_attribute(h.window);
  } catch (const std::invalid_argument& e) {
    return std::string("the state's window cannot be read: ") + e.what();
  }
  if (state == job) return {};
  return "the state's window is " + core::describe_window(state) + ", this job has " +
         core::describe_window(job) +
         "; a state keeps its window and slot rule (give the same options, or use a new --state)";
}

void put_window(const core::WindowSpec& w, const core::TwoTierSet& set, std::uint64_t progress,
                io::CheckpointHeader& h) {
  if (set.bloom().window() == 0) return;
  h.window = core::window_attribute(w);
  h.window_slot = set.bloom().current_slot();
  h.window_slot_progress = progress;
}

SlotClock::SlotClock(const core::WindowSpec& w, std::uint64_t progress)
    : spec_(w), progress_(progress), base_progress_(progress) {}

void SlotClock::start(core::TwoTierSet& set, bool fresh, bool incremental) {
  if (spec_.window == 0) return;
  if (fresh) {
    const std::vector<std::uint64_t> first{0};
    set.bloom().start_window(spec_.window, 0, first);
    return;
  }
  const bool per_run_boundary = incremental && spec_.rule == core::SlotRule::kPerRun;
  const bool full_boundary = spec_.rule != core::SlotRule::kPerRun && progress_ >= spec_.every;
  if (per_run_boundary || full_boundary) open_next(set);
}

bool SlotClock::due(const comm::Communicator& comm, std::uint64_t segment_records) {
  switch (spec_.rule) {
    case core::SlotRule::kPerRun:
      return false;
    case core::SlotRule::kRecords:
      progress_ = base_progress_ + (segment_records - base_records_);
      base_records_ = segment_records;
      base_progress_ = progress_;
      return progress_ >= spec_.every;
    case core::SlotRule::kWallSeconds: {
      const auto now = std::chrono::steady_clock::now();
      const auto elapsed = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::seconds>(now - base_time_).count());
      // Rank 0's clock decides, so that every rank agrees.
      progress_ = comm.allreduce_max(comm.rank() == 0 ? base_progress_ + elapsed : 0);
      return progress_ >= spec_.every;
    }
  }
  return false;
}

void SlotClock::open_next(core::TwoTierSet& set) {
  set.open_slot(set.bloom().current_slot() + 1);
  progress_ = 0;
  base_progress_ = 0;
  base_time_ = std::chrono::steady_clock::now();
}

}  // namespace bloomshard::app
