// What every rank agrees on at the end of a round, in one reduction: whether
// input is left, errors and broken inputs, the newest Bloom layer's fill,
// the progress counters, and the triggers of a checkpoint (a stop request,
// a full tier-2 delta, rank 0's clock). Each field is a sum over ranks, so
// a flag reads as "on how many ranks"; the table below is walked by the
// reduction, so a new field is one member and one table line.
#pragma once

#include <cstdint>

#include "comm/communicator.hpp"

namespace bloomshard::app {

struct RoundAgreement {
  std::uint64_t ranks_reading = 0;      ///< ranks whose feed is not exhausted
  std::uint64_t input_errors = 0;       ///< ranks whose read failed (--on-input-error fail)
  std::uint64_t newest_inserted = 0;    ///< keys in the newest Bloom layer
  std::uint64_t records = 0;            ///< records read, this segment
  std::uint64_t dropped = 0;            ///< records judged duplicates
  std::uint64_t rejected = 0;           ///< records rejected
  std::uint64_t input_bytes_done = 0;   ///< input bytes consumed
  std::uint64_t stop_requests = 0;      ///< ranks that saw a stop signal
  std::uint64_t delta_over_budget = 0;  ///< ranks whose tier-2 delta passed --max-delta-bytes
  std::uint64_t checkpoint_due = 0;     ///< rank 0's clock: --checkpoint-every passed
  std::uint64_t broken_inputs = 0;      ///< inputs held broken under --on-input-error skip

  /// No rank has input left: the rounds are over.
  [[nodiscard]] bool finished() const noexcept { return ranks_reading == 0; }
};

/// One field of the agreement, summed over ranks.
struct AgreementField {
  const char* name;
  std::uint64_t RoundAgreement::*member;
};

/// Every field of RoundAgreement, in wire order.
inline constexpr AgreementField kAgreementFields[] = {
    {"ranks_reading", &RoundAgreement::ranks_reading},
    {"input_errors", &RoundAgreement::input_errors},
    {"newest_inserted", &RoundAgreement::newest_inserted},
    {"records", &RoundAgreement::records},
    {"dropped", &RoundAgreement::dropped},
    {"rejected", &RoundAgreement::rejected},
    {"input_bytes_done", &RoundAgreement::input_bytes_done},
    {"stop_requests", &RoundAgreement::stop_requests},
    {"delta_over_budget", &RoundAgreement::delta_over_budget},
    {"checkpoint_due", &RoundAgreement::checkpoint_due},
    {"broken_inputs", &RoundAgreement::broken_inputs},
};

/// Collective: every field of `mine` summed over the ranks of `comm`, in
/// one MPI_Allreduce of the table's length; the result on every rank.
[[nodiscard]] RoundAgreement agree(const comm::Communicator& comm, const RoundAgreement& mine);

}  // namespace bloomshard::app
