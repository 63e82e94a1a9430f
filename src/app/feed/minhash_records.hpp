// The near-duplicate side of a round under --unit minhash: sketches a
// record's text field (core/minhash/minhash_sketch.hpp: minhash-text/v1,
// shingles, signature) and gives the record its band keys in the
// RoundBatch (B 16-byte keys, or the one empty-text key), which are routed,
// decided and stored like any key. Once the verdicts are back, a record is
// a near-duplicate, and not written, when ANY of its band keys was seen
// before (earlier in the job or in the state); every band key is still
// inserted, a removed record's too, since the owners insert every new key
// they decide. The owners decide in one order for every key (sub-round,
// source rank, position; the router keeps a record's keys in one
// sub-round), so of two records sharing a band key the later one in that
// order is removed and the earlier one is not removed for that key: never
// both for each other's sake. With --confirm-jaccard each band key carries
// the b-bit form of the record's signature after its 16 bytes (the wire key
// of core/minhash/band_confirmation.hpp; its hash is the band key's), and a
// band hit counts only when the owner confirmed it (Verdict::kDuplicate,
// not kUnconfirmedHit): a record whose hits are all unconfirmed is kept.
// In annotate mode with confirmation (`positions`) the wire key ends in the
// record's position as well, and the owners answer each key with a
// core::BandMatch (app/round/confirmed_band_order.hpp), which best_match()
// turns into the record's best estimate and the record it matched.
// Not collective; one per rank. Memory: one sketcher (a normalization
// chunk, a shingle window, the signature) and one wire key.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "app/round/round_batch.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "core/minhash/minhash_jaccard.hpp"
#include "core/minhash/minhash_sketch.hpp"
#include "io/records/json_field_token.hpp"

namespace bloomshard::app {

/// Reject reason: a JSONL record whose text field is a number, object,
/// array, true, false or null.
inline constexpr std::string_view kRejectMinHashNotString = "minhash text field is not a string";

/// This rank's --unit minhash counters (this process).
struct MinHashCounters {
  std::uint64_t records = 0;           ///< records sketched (rejects not included)
  std::uint64_t empty_texts = 0;       ///< of those, empty after normalization
  std::uint64_t near_duplicates = 0;   ///< records removed: a band key seen before
  std::uint64_t band_keys = 0;         ///< band keys routed (the empty-text key included)
  std::uint64_t band_keys_new = 0;     ///< of those, first seen here: inserted
  std::uint64_t candidates = 0;        ///< records with at least one band hit
  std::uint64_t confirmed_hits = 0;    ///< band hits that count (all, without confirmation)
  std::uint64_t unconfirmed_hits = 0;  ///< band hits below --confirm-jaccard
};

/// A near-duplicate's confirmed match: the b-bit estimate of the Jaccard
/// similarity and the position of the record that first inserted the band
/// key (core/order/file_order.hpp order_position: input index + 1 in bits
/// 42-62, the record's byte offset in bits 0-41; 0 when unknown) in the
/// inputs of run `run` (the ordinal of the state's run that inserted the
/// key: 0 without a state; docs/near-duplicates.md section 6).
struct NearMatch {
  double similarity = 0.0;
  std::uint64_t position = 0;
  std::uint32_t run = 0;
};

/// Whether a confirming run's wire keys end in their record's position:
/// in annotate mode (each match is named) and in every run of a state
/// whose forms keep their origins (key.confirm_origins), so the owner can
/// keep each new key's origin. False without --confirm-jaccard.
[[nodiscard]] constexpr bool wire_keys_carry_positions(const core::KeyScheme& key,
                                                       bool annotate) noexcept {
  return key.confirm_jaccard > 0.0 && (annotate || key.confirm_origins);
}

class MinHashRecords {
 public:
  /// `key` must be a valid minhash scheme; `hash_seed` the job's;
  /// `positions`: wire keys carry the record's position (annotate mode with
  /// --confirm-jaccard).
  MinHashRecords(const core::KeyScheme& key, std::uint64_t hash_seed, bool positions = false);

  /// Adds a record whose text field value is `text` (unescaped; for a
  /// plain-line file the line) to `batch` with its band keys; the line
  /// (and its terminator right after it) must lie in a buffer the batch
  /// keeps (RoundBatch::keep), where it stays.
  /// Returns a reject reason (valid until the next add()), or "" when
  /// added. `json`: the line is a JSONL record whose field must be a string.
  [[nodiscard]] std::string_view add(RoundBatch& batch, std::uint32_t file_slot,
                                     std::string_view line, std::string_view terminator,
                                     std::string_view text, bool json, std::uint64_t position = 0);

  /// Decides record i of `batch` from its band keys' verdicts (all of the
  /// batch's, in key order) and counts it: true when kept (no band hit, or
  /// only unconfirmed ones), false when a near-duplicate.
  bool decide(const RoundBatch& batch, std::size_t i, std::span<const core::Verdict> verdicts);

  /// Record i's best confirmed band hit, from the owners' answers to the
  /// batch's keys (core::kBandMatchBytes a key, in key order): the highest
  /// estimate over its keys with Verdict::kDuplicate, the first such key
  /// in band order on a tie; nullopt without a confirmed hit.
  [[nodiscard]] std::optional<NearMatch> best_match(const RoundBatch& batch, std::size_t i,
                                                    std::span<const core::Verdict> verdicts,
                                                    std::span<const std::uint8_t> answers) const;

  [[nodiscard]] const MinHashCounters& counters() const noexcept { return counters_; }

 private:
  std::uint64_t hash_seed_;
  core::MinHashSketcher sketcher_;
  core::MinHashSketch sketch_;
  io::JsonFieldToken field_;
  std::uint32_t confirm_bits_;  // 0: no confirmation form after the keys
  std::uint32_t values_;        // K = bands x rows, for the estimate
  bool positions_;              // the record's position after the form
  core::BbitSignature form_;    // the record's confirmation form
  std::string wire_key_;        // a band key and the form
  std::string error_;           // the sketch's reason for an invalid text
  std::string reason_;          // the reject reason add() returned last
  MinHashCounters counters_;
};

/// The sketcher's parameters of a minhash scheme. Throws
/// std::invalid_argument for a shingle it cannot read.
[[nodiscard]] core::MinHashConfig minhash_config(const core::KeyScheme& key);

}  // namespace bloomshard::app
