#include "app/run/lease_holder.hpp"

#include <iostream>
#include <sstream>

#include "comm/heartbeat.hpp"

namespace bloomshard::app {

// Rank 0: "ok EPOCH fcntl|lease", "no MESSAGE" or "err MESSAGE".
std::string LeaseHolder::acquire_on_rank0() {
  const std::filesystem::path file = lock_file_for(config_.state_dir, config_.output_dir);
  try {
    LeaseRecord holder;
    lease_ = RunLease::acquire(file, config_.fencing, 0, holder);
    if (!lease_ && config_.lock_wait > 0) {
      std::cerr << "bloomshard dedup: another attempt of this run is alive ("
                << describe_holder(holder) << "); waiting up to " << config_.lock_wait
                << " s for it to end\n"
                << std::flush;
      lease_ = RunLease::acquire(file, config_.fencing, config_.lock_wait, holder,
                                 [] { comm::heartbeat(); });
    }
    if (lease_) {
      return "ok " + std::to_string(lease_->epoch()) + (lease_->uses_fcntl() ? " fcntl" : " lease");
    }
    return "no another attempt of this run still holds '" + file.string() + "' after " +
           std::to_string(static_cast<long>(config_.lock_wait)) + " s (" + describe_holder(holder) +
           "); not starting a second writer. Wait for it to end, or raise --lock-wait";
  } catch (const std::exception& e) {
    return std::string("err cannot take the run's lock: ") + e.what();
  }
}

bool LeaseHolder::take() {
  std::string verdict;
  if (world_.rank() == 0) {
    verdict = acquire_on_rank0();
  } else {
    watchdog_.allow_quiet(config_.lock_wait + 30);
  }
  verdict = world_.broadcast(verdict);
  watchdog_.allow_quiet(0);
  comm::heartbeat();
  if (verdict.starts_with("err ")) throw std::runtime_error(verdict.substr(4));
  if (verdict.starts_with("no ")) {
    if (world_.rank() == 0) std::cerr << "bloomshard dedup: " << verdict.substr(3) << '\n';
    return false;
  }
  std::istringstream in(verdict.substr(3));
  std::uint64_t epoch = 0;
  std::string mode;
  in >> epoch >> mode;
  if (world_.rank() != 0) {
    lease_.emplace(RunLease::join(lock_file_for(config_.state_dir, config_.output_dir),
                                  mode == "fcntl", epoch));
  } else if (mode == "lease") {
    watchdog_.set_periodic([this] { return lease_->beat(); }, RunLease::kBeatSeconds);
  }
  return true;
}

void LeaseHolder::release() {
  if (!lease_) return;
  watchdog_.set_periodic(nullptr, 0);  // no beat into a closed lease
  if (world_.rank() != 0) lease_.reset();
  world_.barrier();
  if (world_.rank() == 0) {
    (void)lease_->release_and_remove(lock_file_for(config_.state_dir, config_.output_dir));
    lease_.reset();
  }
}

}  // namespace bloomshard::app
