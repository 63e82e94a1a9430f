// Confirmation of band hits at the owner (--confirm-jaccard T): each band
// key travels with the b-bit form of its record's whole signature
// (minhash_jaccard.hpp, pack_bbit) appended to its 16 bytes, the "wire key".
// The owner lets tier 2 decide the band keys as usual, in order, then
// walks the keys in the same order: a key inserted now has its form
// remembered (the first record's, never replaced); a key tier 2 already
// held is a band hit, confirmed (Verdict::kDuplicate) when the Jaccard
// estimate between the two forms reaches T, else Verdict::kUnconfirmedHit.
// A later key of the same batch is compared with the form of the earlier
// one that inserted it. The forms live in a side table of this owner, by
// band key, for the run; a state carries them beside tier 2's keys:
// find_form, adopt_form and the slice form streams below are what the
// checkpoint writer and loader use (a slice's forms in its stored key
// order, io/checkpoint/checkpoint_forms.hpp). Memory: one form (56 bytes
// at 14 x 8, b = 4) plus about 60 bytes of hash-table node, bucket and
// growth per band key the owner inserted (116 B a key measured at 14 x 8,
// 4M keys, peak RSS). Not collective; one per rank.
//
// With positions (annotate mode, app/round/confirmed_band_order.hpp) each
// wire key also ends in its record's 64-bit position (kBandPositionBytes,
// host byte order), the owner keeps the inserting record's position beside
// its form (8 more bytes a key), and decide() answers every key with a
// BandMatch: for a band hit the key's first record's position and the
// matching b-bit values, so the sender can give the estimate and the
// record matched. Two copies of one band key from two records then differ
// in their positions, so the router never combines them: the later one is
// decided here against the first (all values match: estimate 1).
//
// Origins: with positions the owner also stamps each key it inserts with
// the ordinal of the run that inserted it (set_run: 0 for a state's first
// run, one more for each incremental run, docs/near-duplicates.md section
// 6), since an incremental run's positions name its own inputs. A key's
// (run, position) is its FormOrigin, what a state keeps beside the forms
// (/tier2/form_origins, slice_origin_stream) and what a match answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core/minhash/minhash_band_key.hpp"

namespace bloomshard::core {

/// Bytes of a band key on the wire, before its form.
inline constexpr std::size_t kBandKeyBytes = sizeof(BandKey);

/// Matching b-bit values of two packed forms of `values` values each
/// (pack_bbit's layout; `bits` one of 1, 2, 4, 8, 16, 32).
[[nodiscard]] std::uint32_t bbit_matches(std::span<const std::uint8_t> a,
                                         std::span<const std::uint8_t> b, std::uint32_t values,
                                         std::uint32_t bits) noexcept;

/// The b-bit estimate of `matches` equal values out of `values`:
/// (P - 2^-b) / (1 - 2^-b) with P = matches / values, computed in exactly
/// that order (the e2e oracle repeats it to the last bit).
[[nodiscard]] double bbit_estimate(std::uint32_t matches, std::uint32_t values,
                                   std::uint32_t bits) noexcept;

/// Bytes of a record's position at the end of a wire key with positions,
/// and beside each form the owner keeps.
inline constexpr std::size_t kBandPositionBytes = sizeof(std::uint64_t);

/// What the owner answers for one wire key when it keeps positions: for a
/// band hit (confirmed or not) the position of the record that inserted
/// the key (0: unknown, e.g. a form adopted without one) and the matching
/// b-bit values of the two forms; all zero for a key inserted now.
struct BandMatch {
  std::uint64_t position = 0;
  std::uint32_t matches = 0;
  std::uint32_t run = 0;  ///< ordinal of the run whose input `position` names
};
/// Bytes of a BandMatch on the wire: position (u64), matches (u32), run (u32).
inline constexpr std::size_t kBandMatchBytes = 16;

/// Where a band key came from: the ordinal of the run that inserted it and
/// its first record's position in that run's inputs (0: unknown).
struct FormOrigin {
  std::uint64_t run = 0;
  std::uint64_t position = 0;
  friend bool operator==(const FormOrigin&, const FormOrigin&) = default;
};
/// Bytes of one origin in a state's origin stream: run then position,
/// each a u64 in little-endian byte order.
inline constexpr std::size_t kFormOriginBytes = 16;
/// Largest run ordinal a confirmer keeps (a u32 beside each form).
inline constexpr std::uint64_t kMaxOriginRun = 0xFFFFFFFFULL;
/// Writes `m` into `out` (kBandMatchBytes), and reads it back.
void put_band_match(const BandMatch& m, std::uint8_t* out) noexcept;
[[nodiscard]] BandMatch get_band_match(const std::uint8_t* in) noexcept;

/// Bytes of the side table beside each form (node, bucket, growth; see
/// the banner), for the plan.
inline constexpr std::uint64_t kConfirmIndexBytesPerKey = 60;

/// Resident bytes of the forms of `keys` band keys (forms of `values`
/// values of `bits` bits), index included.
[[nodiscard]] std::uint64_t confirm_table_bytes(std::uint64_t keys, std::uint32_t values,
                                                std::uint32_t bits) noexcept;
/// As above, with `positions`: kBandPositionBytes and a u32 run ordinal
/// more a key.
[[nodiscard]] std::uint64_t confirm_table_bytes(std::uint64_t keys, std::uint32_t values,
                                                std::uint32_t bits, bool positions) noexcept;

/// Counters of one owner's confirmations (band-key level).
struct ConfirmCounters {
  std::uint64_t confirmed = 0;    ///< band hits whose estimate reached T
  std::uint64_t unconfirmed = 0;  ///< band hits below T
};

class BandConfirmer {
 public:
  /// `threshold` T in (0, 1]; forms of `values` values of `bits` bits.
  /// `positions`: wire keys end in their record's position, kept beside
  /// the form and answered (see the banner). Throws std::invalid_argument
  /// otherwise.
  BandConfirmer(double threshold, std::uint32_t values, std::uint32_t bits, bool positions = false);

  /// Bytes a wire key has: the band key, the form, and with positions the
  /// record's position.
  [[nodiscard]] std::size_t wire_bytes() const noexcept {
    return kBandKeyBytes + form_bytes_ + (positions_ ? kBandPositionBytes : 0);
  }
  /// Whether wire keys carry positions and decide() answers them.
  [[nodiscard]] bool keeps_positions() const noexcept { return positions_; }

  /// Decides `wire` keys into `out` in order (see the banner): tier 2 on
  /// their first 16 bytes (the KeyRef hash must be the band key's), then
  /// confirmation. Throws std::invalid_argument for a key of another size
  /// or out.size() != wire.size(), std::logic_error for a band hit whose
  /// key has no remembered form (tier 2 held keys this owner neither saw
  /// inserted nor adopted from the state).
  void decide(TwoTierSet& set, std::span<const KeyRef> wire, std::span<Verdict> out);
  /// As above, with positions: also writes each key's BandMatch into
  /// `answers` (kBandMatchBytes a key, put_band_match's layout). Throws
  /// std::invalid_argument when answers.size() != wire.size() x
  /// kBandMatchBytes or the confirmer keeps no positions.
  void decide(TwoTierSet& set, std::span<const KeyRef> wire, std::span<Verdict> out,
              std::span<std::uint8_t> answers);

  /// Bytes of one form.
  [[nodiscard]] std::size_t form_bytes() const noexcept { return form_bytes_; }
  /// The threshold T a band hit's estimate must reach.
  [[nodiscard]] double threshold() const noexcept { return threshold_; }
  /// The form remembered for `key` (its first record's), or an empty span.
  /// Valid until the next decide() or adopt_form().
  [[nodiscard]] std::span<const std::uint8_t> find_form(const BandKey& key) const noexcept;
  /// Remembers `form` for `key` as its first record's (a form read back
  /// from a state); a key that has one keeps it. Returns whether `form` was
  /// taken. Throws std::invalid_argument for a form of another size.
  bool adopt_form(const BandKey& key, std::span<const std::uint8_t> form);
  /// As adopt_form, with the key's origin (a confirmer with positions;
  /// without them the origin is dropped). Throws std::invalid_argument for
  /// a form of another size or a run beyond kMaxOriginRun.
  bool adopt_form(const BandKey& key, std::span<const std::uint8_t> form, const FormOrigin& origin);
  /// The position of `key`'s first record (0: unknown or no such key;
  /// always 0 without positions).
  [[nodiscard]] std::uint64_t find_position(const BandKey& key) const noexcept;
  /// The origin of `key` ({0, 0}: no such key, or no positions kept).
  [[nodiscard]] FormOrigin find_origin(const BandKey& key) const noexcept;
  /// The run ordinal decide() stamps on the keys it inserts from now on
  /// (with positions; 0 until set).
  void set_run(std::uint32_t run) noexcept { run_ = run; }
  [[nodiscard]] std::uint32_t run() const noexcept { return run_; }

  [[nodiscard]] const ConfirmCounters& counters() const noexcept { return counters_; }
  /// Band keys with a remembered form.
  [[nodiscard]] std::size_t forms() const noexcept { return index_.size(); }
  /// Forgets the forms of `keys` (keys with none are skipped): a windowed
  /// state's keys whose last slot expired, so that a record inserting one
  /// again is its first record. Then packs the remaining forms (one pass
  /// over them). Returns the forms forgotten.
  std::size_t forget_forms(std::span<const BandKey> keys);

 private:
  struct BandKeyHash {
    std::size_t operator()(const BandKey& k) const noexcept;
  };
  [[nodiscard]] std::span<const std::uint8_t> form_of(std::size_t n) const noexcept {
    return {forms_.data() + n * form_bytes_, form_bytes_};
  }

  // Remembers `form` (and `position`) for `key` unless it has one.
  bool remember(const BandKey& key, const std::uint8_t* form, std::uint64_t position,
                std::uint32_t run);

  double threshold_;
  std::uint32_t values_;
  std::uint32_t bits_;
  std::size_t form_bytes_;
  bool positions_;
  std::uint32_t run_ = 0;                       // stamped on keys inserted now
  std::vector<std::uint64_t> first_positions_;  // by form number, with positions only
  std::vector<std::uint32_t> first_runs_;       // by form number, with positions only
  std::unordered_map<BandKey, std::uint32_t, BandKeyHash> index_;  // form number by band key
  std::vector<std::uint8_t> forms_;                                // the forms, back to back
  std::vector<KeyRef> band_keys_;                                  // decide()'s scratch
  ConfirmCounters counters_;
};

/// The form stream of a tier-2 slice: the form of each of `slice`'s keys,
/// in the slice's stored order, back to back (keys() x form_bytes() bytes).
/// Throws std::invalid_argument for a key that is not a band key, and
/// std::logic_error for one without a remembered form.
[[nodiscard]] std::vector<std::uint8_t> slice_form_stream(const BandConfirmer& confirmer,
                                                          const SliceBaseView& slice);

/// The reverse: adopts the form of each of `slice`'s keys from `stream`
/// (slice_form_stream's layout). Returns the forms taken (a key that
/// already had one keeps it). Throws std::invalid_argument when the stream
/// is not slice.size() forms long (before taking any) or a key is not a
/// band key (the forms of the keys before it stay taken: a loader refuses
/// the state then, so the confirmer is dropped with it).
std::size_t adopt_slice_form_stream(BandConfirmer& confirmer, const SliceBaseView& slice,
                                    std::span<const std::uint8_t> stream);
/// As above, with the slice's origin stream (slice_origin_stream's layout)
/// beside the forms, for a confirmer that keeps positions; throws
/// std::invalid_argument (before taking any) when it is not slice.size()
/// origins long or the confirmer keeps no positions.
std::size_t adopt_slice_form_stream(BandConfirmer& confirmer, const SliceBaseView& slice,
                                    std::span<const std::uint8_t> stream,
                                    std::span<const std::uint8_t> origins);

/// The origin stream of a tier-2 slice: each key's FormOrigin in the
/// slice's stored order, kFormOriginBytes each (run, position: u64 LE).
/// Throws std::invalid_argument as slice_form_stream, std::logic_error
/// for a key without a remembered form or a confirmer without positions.
[[nodiscard]] std::vector<std::uint8_t> slice_origin_stream(const BandConfirmer& confirmer,
                                                            const SliceBaseView& slice);

}  // namespace bloomshard::core
