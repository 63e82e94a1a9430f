// KeyRouter::route: one whole round with sender-side combining and
// sub-rounds (see router.hpp for the contract).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "comm/heartbeat.hpp"
#include "comm/router.hpp"

namespace bloomshard::comm {

// One cut over this rank's whole stream (every destination), each group's
// keys in the piece its first key's offset falls in: pieces never decrease
// along the stream, and a group never spans two.
void KeyRouter::cut_at_group_starts(std::span<const OutgoingKey> keys,
                                    std::span<const std::uint32_t> groups, std::uint64_t pieces,
                                    bool cut_by_keys, std::vector<std::uint64_t>& keys_per_piece) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (first_of_[i] == i) total += cut_by_keys ? 1 : kKeyHeaderBytes + keys[i].bytes.size();
  }
  const std::uint64_t chunk = std::max<std::uint64_t>(1, (total + pieces - 1) / pieces);
  std::uint64_t offset = 0;
  std::uint32_t piece = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i == 0 || groups[i] != groups[i - 1]) {
      piece = static_cast<std::uint32_t>(std::min<std::uint64_t>(pieces - 1, offset / chunk));
    }
    if (first_of_[i] != i) continue;
    piece_of_[i] = piece;
    offset += cut_by_keys ? 1 : kKeyHeaderBytes + keys[i].bytes.size();
    keys_per_piece[piece] += 1;
  }
}

bool KeyRouter::route(std::span<const OutgoingKey> keys, const DecideFn& decide,
                      std::span<core::Verdict> out, const RouteOptions& options) {
  // Programming errors, the same on every rank of a correct caller: thrown
  // before any communication (the caller aborts the job).
  if (out.size() != keys.size()) {
    throw std::invalid_argument("route: " + std::to_string(out.size()) + " verdicts for " +
                                std::to_string(keys.size()) + " keys");
  }
  const std::uint64_t budget = options.budget;
  if (budget == 0) throw std::invalid_argument("route: the sub-round budget must be >= 1");
  const std::size_t width = options.answer_bytes;
  if (width != 0 && (!options.answer || options.answers.size() != keys.size() * width)) {
    throw std::invalid_argument("route: " + std::to_string(options.answers.size()) +
                                " answer bytes for " + std::to_string(keys.size()) + " keys of " +
                                std::to_string(width) + " bytes, or no answer function");
  }
  if (!options.key_groups.empty() && options.key_groups.size() != keys.size()) {
    throw std::invalid_argument("route: " + std::to_string(options.key_groups.size()) +
                                " key groups for " + std::to_string(keys.size()) + " keys");
  }
  const std::size_t ranks = comm_.usize();

  // 1. Combining: only first copies travel.
  const std::size_t firsts = finder_.find(keys, first_of_);

  // 2. Loads: what every rank would send and receive in one exchange.
  //    loads[d] = bytes this rank sends to d (summed: d's receive load);
  //    loads[R + r] = rank r's send total (only r sets it);
  //    loads[2R] = first copies (summed: the round's keys, all ranks).
  std::vector<std::uint64_t> loads(2 * ranks + 1, 0);
  std::vector<std::uint64_t> my_dest_keys(ranks, 0);
  piece_of_.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (first_of_[i] != i) continue;
    const std::uint32_t owner = owner_of(keys[i].hash);
    piece_of_[i] = owner;  // the owner for now; the piece below
    loads[owner] += kKeyHeaderBytes + keys[i].bytes.size();
    my_dest_keys[owner] += 1;
  }
  const std::vector<std::uint64_t> my_dest_bytes(loads.begin(),
                                                 loads.begin() + static_cast<long>(ranks));
  for (std::size_t d = 0; d < ranks; ++d) loads[ranks + comm_.urank()] += my_dest_bytes[d];
  loads[2 * ranks] = firsts;
  loads = comm_.allreduce_sum(loads);
  const std::uint64_t round_keys = loads[2 * ranks];
  const std::uint64_t largest = *std::max_element(loads.begin(), loads.end() - 1);
  const std::uint64_t byte_pieces = std::max<std::uint64_t>(1, (largest + budget - 1) / budget);
  const std::uint64_t key_pieces =
      options.max_keys == 0 ? 1 : (round_keys + options.max_keys - 1) / options.max_keys;
  const std::uint64_t pieces = std::max({std::uint64_t{1}, byte_pieces, key_pieces});
  const bool cut_by_keys = key_pieces > byte_pieces;
  if (options.only_in_one_subround && pieces > 1) return false;  // every rank: the loads agree

  // 3. Cut each destination's stream into `pieces` contiguous ranges of
  //    bytes (or of keys): a key belongs to the range its start falls in.
  std::vector<std::uint64_t> keys_per_piece(pieces, 0);
  if (pieces > 1 && !options.key_groups.empty()) {
    cut_at_group_starts(keys, options.key_groups, pieces, cut_by_keys, keys_per_piece);
    if (options.before_subround) keys_per_piece = comm_.allreduce_sum(keys_per_piece);
  } else if (pieces > 1) {
    std::vector<std::uint64_t> chunk(ranks, 1);
    for (std::size_t d = 0; d < ranks; ++d) {
      const std::uint64_t total = cut_by_keys ? my_dest_keys[d] : my_dest_bytes[d];
      chunk[d] = std::max<std::uint64_t>(1, (total + pieces - 1) / pieces);
    }
    std::vector<std::uint64_t> offset(ranks, 0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (first_of_[i] != i) continue;
      const std::uint32_t owner = piece_of_[i];
      piece_of_[i] = static_cast<std::uint32_t>(offset[owner] / chunk[owner]);  // < pieces
      offset[owner] += cut_by_keys ? 1 : kKeyHeaderBytes + keys[i].bytes.size();
      keys_per_piece[piece_of_[i]] += 1;
    }
    if (options.before_subround) keys_per_piece = comm_.allreduce_sum(keys_per_piece);
  } else {
    keys_per_piece[0] = round_keys;
  }

  if (options.before_first_subround) options.before_first_subround(pieces);

  // 4. One exchange, decision and return per piece.
  for (std::uint64_t piece = 0; piece < pieces; ++piece) {
    piece_keys_.clear();
    piece_index_.clear();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (first_of_[i] != i || (pieces > 1 && piece_of_[i] != piece)) continue;
      piece_keys_.push_back(keys[i]);
      piece_index_.push_back(static_cast<std::uint32_t>(i));
    }
    heartbeat();  // a round of many sub-rounds is progress, not a stall
    if (options.before_subround) options.before_subround(keys_per_piece[piece]);
    exchange_within(piece_keys_, piece_batch_, static_cast<std::uint64_t>(INT_MAX));
    piece_owner_verdicts_.resize(piece_batch_.size());
    decide(piece_batch_.keys(), piece_owner_verdicts_);
    piece_verdicts_.resize(piece_keys_.size());
    return_verdicts(piece_batch_, piece_owner_verdicts_, piece_verdicts_);
    for (std::size_t j = 0; j < piece_index_.size(); ++j) out[piece_index_[j]] = piece_verdicts_[j];
    if (width == 0) continue;
    piece_owner_answers_.assign(piece_batch_.size() * width, 0);
    options.answer(piece_owner_answers_);
    piece_answers_.resize(piece_keys_.size() * width);
    return_answers(piece_batch_, piece_owner_answers_, width, piece_answers_);
    for (std::size_t j = 0; j < piece_index_.size(); ++j) {
      std::copy_n(piece_answers_.begin() + static_cast<std::ptrdiff_t>(j * width), width,
                  options.answers.begin() + static_cast<std::ptrdiff_t>(piece_index_[j] * width));
    }
  }

  // 5. Later copies: the first copy was decided before them.
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (first_of_[i] == i) continue;
    out[i] = core::Verdict::kDuplicate;
    if (width != 0) {
      std::fill_n(options.answers.begin() + static_cast<std::ptrdiff_t>(i * width), width, 0);
    }
  }
  stats_.rounds += 1;
  stats_.subrounds += pieces;
  stats_.split_rounds += pieces > 1 ? 1 : 0;
  stats_.keys_combined += keys.size() - firsts;
  return true;
}

}  // namespace bloomshard::comm
