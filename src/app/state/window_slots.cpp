#include "app/state/window_slots.hpp"

#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace bloomshard::app {
namespace {

// A band key of an expiring run, with what finds it in tier 2.
struct ExpiringKey {
  std::uint32_t slice;
  std::uint64_t fingerprint;
  core::BandKey key;
};

// The keys of the owned slices of the runs that opening `slot` drops.
std::vector<ExpiringKey> expiring_keys(const core::TwoTierSet& set, std::uint64_t slot) {
  std::vector<std::uint64_t> tags;
  for (const core::RunInfo& r : set.exact().runs()) tags.push_back(r.slot);
  const std::size_t expiring = core::expired_prefix(tags, slot, set.bloom().window());
  std::vector<ExpiringKey> out;
  for (std::size_t run = 0; run < expiring; ++run) {
    for (std::uint32_t s = set.owned().first; s < set.owned().last; ++s) {
      const core::SliceBaseView view = set.exact().run_view(run, s);
      for (std::size_t i = 0; i < view.size(); ++i) {
        const std::string_view bytes = view.key(i);
        if (bytes.size() != sizeof(core::BandKey)) continue;  // not a band key: no form
        ExpiringKey k{s, view.fingerprints[i], {}};
        std::memcpy(k.key.data(), bytes.data(), k.key.size());
        out.push_back(k);
      }
    }
  }
  return out;
}

}  // namespace

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

void SlotClock::start(core::TwoTierSet& set, bool fresh, bool incremental,
                      core::BandConfirmer* forms) {
  if (spec_.window == 0) return;
  if (fresh) {
    const std::vector<std::uint64_t> first{0};
    set.bloom().start_window(spec_.window, 0, first);
    return;
  }
  const bool per_run_boundary = incremental && spec_.rule == core::SlotRule::kPerRun;
  const bool full_boundary = spec_.rule != core::SlotRule::kPerRun && progress_ >= spec_.every;
  if (per_run_boundary || full_boundary) open_next(set, forms);
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

void SlotClock::open_next(core::TwoTierSet& set, core::BandConfirmer* forms) {
  const std::uint64_t slot = set.bloom().current_slot() + 1;
  std::vector<ExpiringKey> expiring;
  if (forms != nullptr) expiring = expiring_keys(set, slot);
  set.open_slot(slot);
  if (forms != nullptr) {
    std::vector<core::BandKey> gone;
    for (const ExpiringKey& k : expiring) {
      const std::string_view bytes(reinterpret_cast<const char*>(k.key.data()), k.key.size());
      if (!set.exact().contains(k.slice, k.fingerprint, bytes)) gone.push_back(k.key);
    }
    forms->forget_forms(gone);
  }
  progress_ = 0;
  base_progress_ = 0;
  base_time_ = std::chrono::steady_clock::now();
}

}  // namespace bloomshard::app
