// The owner's answer of `query` against a confirming state (a state written
// by `dedup --unit minhash --confirm-jaccard T`): each routed key is a wire
// key (a band key followed by the query record's b-bit form, as dedup
// routes them), tier 2 answers for the band key alone, and a band hit
// counts (Verdict::kDuplicate) only when the b-bit estimate between the
// query record's form and the form the state kept for the key (its first
// record's) reaches the state's T; a hit below T answers
// Verdict::kUnconfirmedHit, a miss Verdict::kNew. Nothing is inserted: the
// state is read only. Not collective; one per rank, over the forms the
// loader read for the rank's owned slices.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bloomshard/core/membership_query.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::app {

/// What a confirming state's forms are: K values of `bits` bits, threshold T.
struct QueryFormScheme {
  double threshold = 0;
  std::uint32_t values = 0;
  std::uint32_t bits = 0;
};

/// Band-key level counts of the confirmation at this owner.
struct QueryConfirmCounters {
  std::uint64_t confirmed = 0;    ///< band hits whose estimate reached T
  std::uint64_t unconfirmed = 0;  ///< band hits below T
};

class QueryConfirmation {
 public:
  /// `forms` holds the form of every key of the owned slices (loaded with
  /// the state) and must outlive this object.
  QueryConfirmation(const core::BandConfirmer& forms, QueryFormScheme scheme);

  /// Answers the wire keys `wire` (owned by this rank) into `out` (see the
  /// banner). Throws std::invalid_argument for a key that is not a wire
  /// key of the state's form size or out.size() != wire.size(), and
  /// std::logic_error for a band hit whose key has no form (a state whose
  /// forms do not cover its keys; the loader refuses such a state first).
  void answer(const core::TwoTierSet& set, std::span<const core::KeyRef> wire,
              std::span<core::Verdict> out, core::QueryCounters& keys);

  [[nodiscard]] const QueryConfirmCounters& counters() const noexcept { return counters_; }

 private:
  const core::BandConfirmer& forms_;
  QueryFormScheme scheme_;
  std::vector<core::KeyRef> band_keys_;  // answer()'s scratch: the wire keys' first 16 bytes
  std::vector<std::uint8_t> hits_;
  QueryConfirmCounters counters_;
};

}  // namespace bloomshard::app
