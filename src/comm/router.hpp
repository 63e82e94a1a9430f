// The batched all-to-all key router: one round sends every key a rank read
// to the rank owning its slice, and later carries one verdict byte per key
// back to the sender, in the sender's original order.
//
// Wire format (MPI_BYTE, no conversion: ranks must share byte order, as on
// any homogeneous cluster): per key, hash.hi (u64) + hash.lo (u64) +
// length (u32) + the key bytes; kKeyHeaderBytes = 20 bytes of overhead.
//
// Cost per exchange(): one MPI_Alltoall of 2 x u64 per rank pair (byte and
// key counts), one 4-byte MPI_Allreduce (so that an oversized round fails on
// every rank at once instead of leaving some ranks hanging), and one
// MPI_Alltoallv of the payload. return_verdicts() is one MPI_Alltoallv of one
// byte per key; it needs no count exchange because the batch remembers them.
// return_answers() is the same for answers of a fixed width a key (route()'s
// RouteOptions::answer_bytes; annotate mode with --confirm-jaccard, 12
// bytes); without answers nothing more moves.
//
// Limit: MPI counts and displacements are int, so a rank's total payload
// sent AND its total payload received in one round must each stay below
// 2 GiB (RouterLimits). The sender side is bounded by the caller's
// --batch-bytes; the receive side is the sum over all senders, so in the
// worst (fully skewed) case a round receives R x batch bytes: keep
// R x (batch bytes + 20 x keys per batch) < 2 GiB, e.g. under 32 MiB per rank at
// 64 ranks. A round over the limit throws RouterLimitError on every rank
// before any payload moves; the router stays usable.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "comm/node_exchange.hpp"
#include "core/order/first_occurrence.hpp"

namespace bloomshard::comm {

/// A key to route: its hash (which decides the owner) and its bytes. The
/// bytes must stay alive until exchange() returns.
using OutgoingKey = core::KeyRef;

/// Bytes on the wire per key besides the key itself: hash (16) + length (4).
inline constexpr std::size_t kKeyHeaderBytes = 20;

/// How the router's all-to-all exchanges move bytes.
enum class ExchangeMode : std::uint8_t {
  kFlat,  ///< MPI_Alltoall(v) over all ranks: R - 1 messages per rank
  kNode,  ///< node_alltoallv: L - 1 + N - 1 messages (flat where nodes are uneven)
  kAuto,  ///< kNode from 1024 ranks on when there are >= 2 nodes, else kFlat
};

/// Parses "flat", "node" or "auto"; nullopt for anything else.
[[nodiscard]] std::optional<ExchangeMode> parse_exchange_mode(std::string_view name);

/// Per-round limits; the default is what MPI's int counts allow.
struct RouterLimits {
  /// Max payload bytes one rank sends, and receives, in one exchange().
  std::uint64_t max_exchange_bytes = static_cast<std::uint64_t>(INT_MAX);
};

/// Default budget of route(): payload bytes any one rank should send or
/// receive in one sub-round. Well below MPI's 2 GiB int limit, because a
/// sub-round may overshoot it by one key per sending rank (route()).
inline constexpr std::uint64_t kDefaultSubroundBudget = 256ULL << 20;

/// The owner's side of route(): judges `keys` (this rank's share of one
/// sub-round, in decision order) into `verdicts` (same size).
using DecideFn =
    std::function<void(std::span<const core::KeyRef> keys, std::span<core::Verdict> verdicts)>;

/// Optional limits and hooks of route() beyond the byte budget.
struct RouteOptions {
  /// Payload bytes any rank should send or receive in one sub-round.
  std::uint64_t budget = kDefaultSubroundBudget;
  /// Keys (first copies, all ranks together) one sub-round may carry;
  /// 0: no limit. The dedup job passes the newest Bloom layer's capacity so
  /// that no sub-round can overfill a layer that opens just before it.
  std::uint64_t max_keys = 0;
  /// Called on every rank before each sub-round's decisions, with the same
  /// value everywhere: how many keys (all ranks) the sub-round will decide,
  /// an upper bound of the inserts it can make. A collective point: the
  /// dedup job opens the next Bloom layer here when the newest would
  /// overflow (ScalableBloom::add_layer must run on every rank together).
  std::function<void(std::uint64_t keys_in_subround)> before_subround = nullptr;
  /// Called once per route() on every rank, before the first sub-round's
  /// decisions, with the number of sub-rounds the round is cut into (the
  /// same value everywhere; no extra message: the loads are agreed anyway).
  std::function<void(std::uint64_t subrounds)> before_first_subround = nullptr;
  /// Only a round of one sub-round: when the agreed loads cut the round
  /// into more, route() returns false on every rank, having exchanged the
  /// loads alone (no hook called, no verdict written, no statistic counted),
  /// so that the caller can route other keys instead (the lockstep layout
  /// sends its keys without order tags only when one sub-round holds them:
  /// app/round/round.cpp).
  bool only_in_one_subround = false;
  /// Empty, or one group number per key (non-decreasing): keys of one group
  /// (the band keys of one record) travel in the same sub-round to every
  /// owner. The round is then cut once over this rank's whole stream at
  /// group starts instead of per destination, so the decision order
  /// (sub-round, source rank, position) ranks groups alike at every owner.
  /// A sub-round may then overshoot the budget (and max_keys) by one group
  /// per sending rank, and a destination's share by the chance imbalance
  /// of the keys' owners.
  std::span<const std::uint32_t> key_groups = {};
  /// Bytes of an answer the owner gives each key beside its verdict (0:
  /// none, and verdicts cost their one byte a key as always). With
  /// answer_bytes > 0, `answer` is called at the owner right after each
  /// `decide`, to write answer_bytes per key of that decision (in its
  /// order), and `answers` (keys.size() x answer_bytes) receives each key's
  /// answer in the sender's order; a later copy combined at the sender gets
  /// zeros (callers that need its own answer keep copies distinct, e.g. by
  /// a position in the key bytes). Cost: one more MPI_Alltoallv of
  /// answer_bytes a key per sub-round.
  std::size_t answer_bytes = 0;
  std::function<void(std::span<std::uint8_t> answers)> answer = nullptr;
  std::span<std::uint8_t> answers = {};
};

/// A round too large for one MPI_Alltoallv (see the limit above). Thrown on
/// every rank of the round together.
class RouterLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Cumulative traffic counters of one KeyRouter (this rank only; reduce
/// them with Communicator::allreduce_sum for job totals).
struct RouterStats {
  std::uint64_t exchanges = 0;                   ///< exchange() calls
  std::uint64_t keys_sent = 0;                   ///< including keys this rank owns
  std::uint64_t keys_received = 0;               ///< including keys from itself
  std::uint64_t payload_bytes_sent = 0;          ///< header + key bytes, all ranks
  std::uint64_t payload_bytes_sent_remote = 0;   ///< same, to other ranks only
  std::uint64_t payload_bytes_received = 0;      ///< header + key bytes
  std::uint64_t max_payload_bytes_received = 0;  ///< largest single round
  std::uint64_t verdict_bytes_sent = 0;          ///< one per key decided here
  std::uint64_t verdict_bytes_received = 0;      ///< one per key sent
  std::uint64_t rounds = 0;                      ///< route() calls
  std::uint64_t subrounds = 0;                   ///< exchanges route() made (>= rounds)
  std::uint64_t split_rounds = 0;                ///< route() calls that needed > 1 sub-round
  std::uint64_t keys_combined = 0;               ///< later copies of a key in one batch, never sent
  std::uint64_t answer_bytes_sent = 0;      ///< RouteOptions::answer_bytes per key decided here
  std::uint64_t answer_bytes_received = 0;  ///< the same per key sent
};

/// The keys one rank received in one round, owned together with the buffer
/// their bytes live in. Move-only: moving keeps the views valid; reusing
/// the batch in another exchange() invalidates them.
class RoutedBatch {
 public:
  RoutedBatch() = default;
  RoutedBatch(RoutedBatch&&) noexcept = default;
  RoutedBatch& operator=(RoutedBatch&&) noexcept = default;
  RoutedBatch(const RoutedBatch&) = delete;
  RoutedBatch& operator=(const RoutedBatch&) = delete;

  /// Received keys in decision order: source rank ascending, then the
  /// sender's order. Every key's slice is owned by this rank.
  [[nodiscard]] std::span<const core::KeyRef> keys() const noexcept { return keys_; }
  [[nodiscard]] std::size_t size() const noexcept { return keys_.size(); }
  [[nodiscard]] bool empty() const noexcept { return keys_.empty(); }
  /// Number of received keys per source rank (keys() is these runs in order).
  [[nodiscard]] std::span<const int> keys_per_source() const noexcept { return recv_counts_; }
  /// Number of keys this rank sent in the round (= verdicts it gets back).
  [[nodiscard]] std::size_t keys_sent() const noexcept { return owner_of_sent_.size(); }

 private:
  friend class KeyRouter;

  std::vector<char> buffer_;                  // received payload, parsed in place
  std::vector<core::KeyRef> keys_;            // views into buffer_
  std::vector<int> recv_counts_;              // keys received per source
  std::vector<int> sent_counts_;              // keys sent per destination
  std::vector<std::uint32_t> owner_of_sent_;  // owner rank of each sent key
};

/// Routes keys to slice owners. Holds reusable scratch buffers, so keep one
/// router for the whole job. All methods named collective must be called by
/// every rank of the communicator, in the same order.
class KeyRouter {
 public:
  /// Throws std::invalid_argument unless 1 <= comm.size() <= num_slices
  /// <= core::kMaxSlices (every rank owns at least one slice).
  KeyRouter(const Communicator& comm, std::uint32_t num_slices, RouterLimits limits = {});
  /// As above, with an exchange mode. Collective for kNode and kAuto (it
  /// discovers the nodes: NodeTopology::discover, with ranks_per_node > 0
  /// standing in for nodes of that many consecutive ranks).
  KeyRouter(const Communicator& comm, std::uint32_t num_slices, RouterLimits limits,
            ExchangeMode mode, int ranks_per_node = 0);

  /// True when the exchanges go node-aware (kNode or kAuto chose it, and
  /// every node has the same rank count).
  [[nodiscard]] bool node_aware() const noexcept { return topology_ != nullptr; }
  /// The nodes of a node-aware router (nullptr when flat).
  [[nodiscard]] const NodeTopology* topology() const noexcept { return topology_.get(); }

  /// Collective: sends keys[i] to owner_of(keys[i].hash) and returns what
  /// this rank received (see RoutedBatch). An empty span is fine. Throws
  /// RouterLimitError (on every rank) if the round is over the limits or a
  /// key is longer than 2^32-1 bytes; MpiError if MPI fails.
  [[nodiscard]] RoutedBatch exchange(std::span<const OutgoingKey> keys);
  /// Collective: as above, reusing `out`'s buffers (no allocation once they
  /// have grown to the round size). Invalidates views into the old `out`.
  void exchange(std::span<const OutgoingKey> keys, RoutedBatch& out);

  /// Collective: sends verdicts[j] (for batch.keys()[j]) back to the key's
  /// sender and returns, for this rank's own keys, the verdicts in the order
  /// they were given to exchange(). Throws std::invalid_argument, before any
  /// communication, unless verdicts.size() == batch.size(): that is a
  /// programming error and the caller must abort_job() (the other ranks are
  /// already waiting in the collective).
  [[nodiscard]] std::vector<core::Verdict> return_verdicts(const RoutedBatch& batch,
                                                           std::span<const core::Verdict> verdicts);
  /// Collective: as above, writing into `out` (out.size() == batch.keys_sent()).
  void return_verdicts(const RoutedBatch& batch, std::span<const core::Verdict> verdicts,
                       std::span<core::Verdict> out);

  /// Collective: as return_verdicts, for answers of a fixed `width` bytes
  /// a key (answers.size() == batch.size() x width, out.size() ==
  /// batch.keys_sent() x width). Throws std::invalid_argument as
  /// return_verdicts, before any communication.
  void return_answers(const RoutedBatch& batch, std::span<const std::uint8_t> answers,
                      std::size_t width, std::span<std::uint8_t> out);

  /// Collective: one whole round. Every key's first copy in `keys` (same
  /// hash and bytes) travels to its owner; the owner judges what it
  /// receives with `decide`; the verdicts come back, and each later copy of
  /// a key in `keys` gets kDuplicate (combining: a hot key costs one copy
  /// per sending rank, not one per record). When any rank would send or
  /// receive more than `budget` payload bytes, the round is cut into S
  /// sub-rounds, the same S on every rank (S = ceil(largest load / budget),
  /// or ceil(keys of all ranks / max_keys) when that is larger); each
  /// destination's keys are cut into S contiguous byte ranges (key ranges
  /// when the key limit binds), so a sub-round moves about budget bytes per
  /// rank plus at most one key per sender (or about max_keys keys plus one
  /// per sender and destination; under RouteOptions::key_groups one cut
  /// over the sender's whole stream at group starts). Decision order at an owner: sub-round, then
  /// source rank, then the sender's order; deterministic for a given rank count, batch and budget.
  /// Writes verdicts for `keys` into `out` (out.size() == keys.size()). Cost: one MPI_Allreduce of
  /// 2R + 1 u64 (the loads; one more of S u64 when split), then per sub-round what exchange() and
  /// return_verdicts() cost. No round size ever throws, except a sub-round
  /// over MPI's int limit (only with keys near 2^31 bytes); budget >= 1.
  /// Returns true, or false as RouteOptions::only_in_one_subround says.
  bool route(std::span<const OutgoingKey> keys, const DecideFn& decide,
             std::span<core::Verdict> out, const RouteOptions& options = {});

  /// Collective: true once every rank passes local_done == true (one 4-byte
  /// MPI_Allreduce). A rank out of input keeps calling exchange() with no
  /// keys, serving as owner, until this returns true.
  [[nodiscard]] bool all_done(bool local_done);

  /// Rank owning the slice of `hash`.
  [[nodiscard]] std::uint32_t owner_of(const core::KeyHash& hash) const;

  [[nodiscard]] const RouterStats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::uint32_t num_slices() const noexcept { return num_slices_; }
  [[nodiscard]] const Communicator& comm() const noexcept { return comm_; }

 private:
  // exchange() against an explicit payload limit (route() uses MPI's).
  void exchange_within(std::span<const OutgoingKey> keys, RoutedBatch& out, std::uint64_t limit);
  // exchange_within's steps. The owner of every key into out and the
  // bytes and keys per destination into counts_out_; true if a key is too
  // long for the u32 length.
  bool count_by_owner(std::span<const OutgoingKey> keys, RoutedBatch& out);
  // Collective: counts_out_ of every rank into counts_in_ of its peers.
  void exchange_counts();
  // route()'s sub-round of every first copy in piece_of_ under
  // RouteOptions::key_groups, and the keys of each piece.
  void cut_at_group_starts(std::span<const OutgoingKey> keys, std::span<const std::uint32_t> groups,
                           std::uint64_t pieces, bool cut_by_keys,
                           std::vector<std::uint64_t>& keys_per_piece);
  // The received payload parsed in place into out's keys (the decision
  // order), with the per-rank key counts verdicts travel back by.
  void unpack_keys(RoutedBatch& out) const;
  // MPI_Alltoallv of bytes, flat or node-aware.
  void alltoallv_bytes(const void* send, const std::vector<int>& send_counts,
                       const std::vector<int>& send_displs, void* recv,
                       const std::vector<int>& recv_counts, const std::vector<int>& recv_displs);

  Communicator comm_;
  std::uint32_t num_slices_;
  RouterLimits limits_;
  RouterStats stats_;
  // Scratch reused across rounds; sized by the rank count or the round.
  std::vector<std::uint64_t> counts_out_;  // per destination: bytes, keys
  std::vector<std::uint64_t> counts_in_;   // per source: bytes, keys
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  std::vector<std::size_t> cursor_;
  std::vector<char> send_buffer_;
  std::vector<core::Verdict> verdict_buffer_;
  // route()'s scratch.
  core::FirstOccurrenceFinder finder_;
  std::vector<std::uint32_t> first_of_;
  std::vector<std::uint32_t> piece_of_;     // sub-round of each first copy
  std::vector<std::uint32_t> piece_index_;  // original index of each key sent this sub-round
  std::vector<OutgoingKey> piece_keys_;
  std::vector<core::Verdict> piece_owner_verdicts_, piece_verdicts_;
  std::vector<std::uint8_t> piece_owner_answers_, piece_answers_, answer_buffer_;
  RoutedBatch piece_batch_;
  // Node-aware exchanges (null: flat).
  std::unique_ptr<NodeTopology> topology_;
  std::vector<char> node_scratch_;
  std::vector<int> fixed_counts_, fixed_displs_;
};

}  // namespace bloomshard::comm
