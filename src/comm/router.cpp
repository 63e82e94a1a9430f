#include "comm/router.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "bloomshard/core/slice_map.hpp"
#include "comm/mpi_error.hpp"

namespace bloomshard::comm {
namespace {

static_assert(sizeof(core::Verdict) == 1, "verdicts travel as MPI_BYTE");

// Converts per-rank counts (already checked against the int limit) to MPI's
// int counts and their exclusive prefix sums.
void to_int_counts(std::span<const std::uint64_t> pairs, std::size_t field,
                   std::vector<int>& counts, std::vector<int>& displs) {
  const std::size_t n = pairs.size() / 2;
  counts.resize(n);
  displs.resize(n);
  for (std::size_t r = 0; r < n; ++r) counts[r] = static_cast<int>(pairs[2 * r + field]);
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
}

std::uint64_t sum_field(std::span<const std::uint64_t> pairs, std::size_t field) {
  std::uint64_t total = 0;
  for (std::size_t r = field; r < pairs.size(); r += 2) total += pairs[r];
  return total;
}

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Collective: throws RouterLimitError on every rank when any rank's round is
// over `limit` bytes either way or holds a key longer than 2^32-1 bytes.
void check_round_limit(const Communicator& comm, std::uint64_t limit, std::uint64_t send_total,
                       std::uint64_t recv_total, bool key_too_long) {
  const bool local_ok = !key_too_long && send_total <= limit && recv_total <= limit;
  if (comm.all(local_ok)) return;
  throw RouterLimitError(
      "key router: a round exceeds the per-rank exchange limit of " + std::to_string(limit) +
      " bytes (MPI int counts) on at least one rank; this rank would send " +
      std::to_string(send_total) + " and receive " + std::to_string(recv_total) + " bytes" +
      (key_too_long ? " and has a key longer than 2^32-1 bytes" : "") +
      ". Lower --batch-bytes (the worst case receives ranks x batch bytes).");
}

// Packs each key (hash hi, hash lo, u32 length, bytes) behind its owner's
// cursor, the owners' blocks starting at `displs`.
void pack_keys(std::span<const OutgoingKey> keys, std::span<const std::uint32_t> owners,
               std::span<const int> displs, std::vector<std::size_t>& cursor,
               std::vector<char>& buffer, std::uint64_t total) {
  if (buffer.size() < total) buffer.resize(total);
  cursor.assign(displs.begin(), displs.end());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    char* p = buffer.data() + cursor[owners[i]];
    const auto len = static_cast<std::uint32_t>(keys[i].bytes.size());
    std::memcpy(p, &keys[i].hash.hi, 8);
    std::memcpy(p + 8, &keys[i].hash.lo, 8);
    std::memcpy(p + 16, &len, 4);
    if (len > 0) std::memcpy(p + kKeyHeaderBytes, keys[i].bytes.data(), len);
    cursor[owners[i]] += kKeyHeaderBytes + len;
  }
}

// The key at `p` (before `end`) from rank `src`, viewed in place; advances
// `p` past it. Throws std::logic_error on a truncated payload.
core::KeyRef parse_key(const char*& p, const char* end, std::size_t src) {
  if (end - p < static_cast<std::ptrdiff_t>(kKeyHeaderBytes)) {
    throw std::logic_error("key router: truncated payload from rank " + std::to_string(src));
  }
  core::KeyRef ref;
  ref.hash.hi = load<std::uint64_t>(p);
  ref.hash.lo = load<std::uint64_t>(p + 8);
  const auto len = load<std::uint32_t>(p + 16);
  p += kKeyHeaderBytes;
  if (static_cast<std::uint64_t>(end - p) < len) {
    throw std::logic_error("key router: truncated key from rank " + std::to_string(src));
  }
  ref.bytes = std::string_view(p, len);
  p += len;
  return ref;
}

}  // namespace

std::optional<ExchangeMode> parse_exchange_mode(std::string_view name) {
  if (name == "flat") return ExchangeMode::kFlat;
  if (name == "node") return ExchangeMode::kNode;
  if (name == "auto") return ExchangeMode::kAuto;
  return std::nullopt;
}

KeyRouter::KeyRouter(const Communicator& comm, std::uint32_t num_slices, RouterLimits limits,
                     ExchangeMode mode, int ranks_per_node)
    : KeyRouter(comm, num_slices, limits) {
  // The model of docs/scaling.md: below ~1000 ranks the extra copies cost
  // more than the messages they save.
  constexpr std::uint32_t kAutoNodeRanks = 1024;
  if (mode == ExchangeMode::kFlat) return;
  if (mode == ExchangeMode::kAuto && comm_.usize() < kAutoNodeRanks) return;
  auto topology = std::make_unique<NodeTopology>(NodeTopology::discover(comm_, ranks_per_node));
  const bool worth_it = topology->uniform() && topology->num_nodes() > 1;
  if (worth_it || (mode == ExchangeMode::kNode && topology->uniform())) {
    topology_ = std::move(topology);
  }
}

void KeyRouter::alltoallv_bytes(const void* send, const std::vector<int>& send_counts,
                                const std::vector<int>& send_displs, void* recv,
                                const std::vector<int>& recv_counts,
                                const std::vector<int>& recv_displs) {
  if (topology_) {
    node_alltoallv(*topology_, static_cast<const char*>(send), send_counts, send_displs,
                   static_cast<char*>(recv), recv_counts, recv_displs, node_scratch_);
    return;
  }
  check_mpi(MPI_Alltoallv(send, send_counts.data(), send_displs.data(), MPI_BYTE, recv,
                          recv_counts.data(), recv_displs.data(), MPI_BYTE, comm_.mpi_comm()),
            "MPI_Alltoallv");
}

KeyRouter::KeyRouter(const Communicator& comm, std::uint32_t num_slices, RouterLimits limits)
    : comm_(comm), num_slices_(num_slices), limits_(limits) {
  // Validates 1 <= R <= P <= kMaxSlices once, with core's own message.
  (void)core::slices_of_rank(comm_.urank(), comm_.usize(), num_slices_);
  if (limits_.max_exchange_bytes > static_cast<std::uint64_t>(INT_MAX)) {
    throw std::invalid_argument("RouterLimits.max_exchange_bytes above the MPI int limit");
  }
}

std::uint32_t KeyRouter::owner_of(const core::KeyHash& hash) const {
  return core::owner_of_slice(core::slice_of(hash, num_slices_), comm_.usize(), num_slices_);
}

RoutedBatch KeyRouter::exchange(std::span<const OutgoingKey> keys) {
  RoutedBatch out;
  exchange(keys, out);
  return out;
}

void KeyRouter::exchange(std::span<const OutgoingKey> keys, RoutedBatch& out) {
  exchange_within(keys, out, limits_.max_exchange_bytes);
}

void KeyRouter::exchange_within(std::span<const OutgoingKey> keys, RoutedBatch& out,
                                std::uint64_t limit) {
  const bool key_too_long = count_by_owner(keys, out);
  exchange_counts();
  const std::uint64_t send_total = sum_field(counts_out_, 0);
  const std::uint64_t recv_total = sum_field(counts_in_, 0);
  check_round_limit(comm_, limit, send_total, recv_total, key_too_long);

  to_int_counts(counts_out_, 0, send_counts_, send_displs_);
  to_int_counts(counts_in_, 0, recv_counts_, recv_displs_);
  pack_keys(keys, out.owner_of_sent_, send_displs_, cursor_, send_buffer_, send_total);
  if (out.buffer_.size() < recv_total) out.buffer_.resize(recv_total);
  alltoallv_bytes(send_buffer_.data(), send_counts_, send_displs_, out.buffer_.data(), recv_counts_,
                  recv_displs_);
  unpack_keys(out);

  stats_.exchanges += 1;
  stats_.keys_sent += keys.size();
  stats_.keys_received += out.keys_.size();
  stats_.payload_bytes_sent += send_total;
  stats_.payload_bytes_sent_remote += send_total - counts_out_[2 * comm_.urank()];
  stats_.payload_bytes_received += recv_total;
  stats_.max_payload_bytes_received = std::max(stats_.max_payload_bytes_received, recv_total);
}

bool KeyRouter::count_by_owner(std::span<const OutgoingKey> keys, RoutedBatch& out) {
  out.owner_of_sent_.resize(keys.size());
  counts_out_.assign(2 * comm_.usize(), 0);
  bool key_too_long = false;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint32_t owner = owner_of(keys[i].hash);
    out.owner_of_sent_[i] = owner;
    counts_out_[2 * owner] += kKeyHeaderBytes + keys[i].bytes.size();
    counts_out_[2 * owner + 1] += 1;
    key_too_long |= keys[i].bytes.size() > UINT32_MAX;
  }
  return key_too_long;
}

void KeyRouter::exchange_counts() {
  const std::size_t ranks = comm_.usize();
  counts_in_.assign(2 * ranks, 0);
  if (topology_) {  // the counts travel node-aware too: 16 bytes per rank pair
    fixed_counts_.assign(ranks, 2 * sizeof(std::uint64_t));
    fixed_displs_.resize(ranks);
    std::exclusive_scan(fixed_counts_.begin(), fixed_counts_.end(), fixed_displs_.begin(), 0);
    alltoallv_bytes(counts_out_.data(), fixed_counts_, fixed_displs_, counts_in_.data(),
                    fixed_counts_, fixed_displs_);
    return;
  }
  check_mpi(MPI_Alltoall(counts_out_.data(), 2, MPI_UINT64_T, counts_in_.data(), 2, MPI_UINT64_T,
                         comm_.mpi_comm()),
            "MPI_Alltoall");
}

void KeyRouter::unpack_keys(RoutedBatch& out) const {
  const std::size_t ranks = comm_.usize();
  out.keys_.clear();
  out.keys_.reserve(sum_field(counts_in_, 1));
  out.recv_counts_.resize(ranks);
  out.sent_counts_.resize(ranks);
  for (std::size_t src = 0; src < ranks; ++src) {
    const std::uint64_t n = counts_in_[2 * src + 1];
    out.recv_counts_[src] = static_cast<int>(n);
    out.sent_counts_[src] = static_cast<int>(counts_out_[2 * src + 1]);
    const char* p = out.buffer_.data() + recv_displs_[src];
    const char* const end = p + recv_counts_[src];
    for (std::uint64_t k = 0; k < n; ++k) out.keys_.push_back(parse_key(p, end, src));
    if (p != end) {
      throw std::logic_error("key router: payload from rank " + std::to_string(src) +
                             " longer than its key count");
    }
  }
}

std::vector<core::Verdict> KeyRouter::return_verdicts(const RoutedBatch& batch,
                                                      std::span<const core::Verdict> verdicts) {
  std::vector<core::Verdict> out(batch.keys_sent());
  return_verdicts(batch, verdicts, out);
  return out;
}

void KeyRouter::return_verdicts(const RoutedBatch& batch, std::span<const core::Verdict> verdicts,
                                std::span<core::Verdict> out) {
  if (verdicts.size() != batch.size() || out.size() != batch.keys_sent() ||
      batch.recv_counts_.size() != comm_.usize()) {
    throw std::invalid_argument("return_verdicts: " + std::to_string(verdicts.size()) +
                                " verdicts for " + std::to_string(batch.size()) +
                                " received keys, output for " + std::to_string(out.size()) +
                                " of " + std::to_string(batch.keys_sent()) + " sent keys");
  }
  // Owner side sends back along the path the keys came; the counts swap.
  send_counts_.assign(batch.recv_counts_.begin(), batch.recv_counts_.end());
  recv_counts_.assign(batch.sent_counts_.begin(), batch.sent_counts_.end());
  send_displs_.resize(send_counts_.size());
  recv_displs_.resize(recv_counts_.size());
  std::exclusive_scan(send_counts_.begin(), send_counts_.end(), send_displs_.begin(), 0);
  std::exclusive_scan(recv_counts_.begin(), recv_counts_.end(), recv_displs_.begin(), 0);

  verdict_buffer_.resize(out.size());
  alltoallv_bytes(verdicts.data(), send_counts_, send_displs_, verdict_buffer_.data(), recv_counts_,
                  recv_displs_);

  // Each owner answered our keys in the order we sent them, which is our
  // original order restricted to that owner.
  cursor_.assign(recv_displs_.begin(), recv_displs_.end());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = verdict_buffer_[cursor_[batch.owner_of_sent_[i]]++];
  }
  stats_.verdict_bytes_sent += verdicts.size();
  stats_.verdict_bytes_received += out.size();
}

void KeyRouter::return_answers(const RoutedBatch& batch, std::span<const std::uint8_t> answers,
                               std::size_t width, std::span<std::uint8_t> out) {
  if (width == 0 || answers.size() != batch.size() * width ||
      out.size() != batch.keys_sent() * width || batch.recv_counts_.size() != comm_.usize()) {
    throw std::invalid_argument("return_answers: " + std::to_string(answers.size()) +
                                " answer bytes for " + std::to_string(batch.size()) +
                                " received keys, output of " + std::to_string(out.size()) +
                                " bytes for " + std::to_string(batch.keys_sent()) + " sent keys, " +
                                std::to_string(width) + " bytes a key");
  }
  // As return_verdicts, counts and displacements in bytes of width a key.
  const auto widen = [width](const std::vector<int>& keys, std::vector<int>& counts,
                             std::vector<int>& displs) {
    counts.resize(keys.size());
    for (std::size_t r = 0; r < keys.size(); ++r) {
      counts[r] = static_cast<int>(static_cast<std::size_t>(keys[r]) * width);
    }
    displs.resize(counts.size());
    std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  };
  widen(batch.recv_counts_, send_counts_, send_displs_);
  widen(batch.sent_counts_, recv_counts_, recv_displs_);
  answer_buffer_.resize(out.size());
  alltoallv_bytes(answers.data(), send_counts_, send_displs_, answer_buffer_.data(), recv_counts_,
                  recv_displs_);
  cursor_.assign(recv_displs_.begin(), recv_displs_.end());
  for (std::size_t i = 0; i < batch.keys_sent(); ++i) {
    std::size_t& at = cursor_[batch.owner_of_sent_[i]];
    std::memcpy(out.data() + i * width, answer_buffer_.data() + at, width);
    at += width;
  }
  stats_.answer_bytes_sent += answers.size();
  stats_.answer_bytes_received += out.size();
}

bool KeyRouter::all_done(bool local_done) { return comm_.all(local_done); }

}  // namespace bloomshard::comm
