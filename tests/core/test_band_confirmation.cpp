// Confirmation of band hits at the owner (core/minhash/band_confirmation.hpp):
// the b-bit match count against pack_bbit's layout, the estimate, and the
// decisions: a new key remembers its first record's form, a hit is
// confirmed at or above T and unconfirmed below, a later copy in the same
// batch compares with the earlier one's form, a key's form is never
// replaced, and a hit without a form is a loud logic error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "core/minhash/minhash_jaccard.hpp"

namespace bloomshard::core {
namespace {

constexpr std::uint32_t kValues = 16;
constexpr std::uint32_t kBits = 4;

ScalableBloomParams params() {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.fpr_target = 0.01;
  p.num_slices = 8;
  return p;
}

// A signature of kValues values whose first `same` values are those of the
// base (i) and the others differ from it in their low 4 bits.
std::vector<std::uint32_t> signature(std::uint32_t same) {
  std::vector<std::uint32_t> v(kValues);
  for (std::uint32_t i = 0; i < kValues; ++i) v[i] = i < same ? i : i + 0x100U + 1U;
  return v;
}

// The wire key: band key `name` (16 bytes) and the form of `sig`.
std::string wire(const std::string& name, const std::vector<std::uint32_t>& sig) {
  std::string key(kBandKeyBytes, '\0');
  std::memcpy(key.data(), name.data(), std::min(name.size(), kBandKeyBytes));
  const BbitSignature form = pack_bbit(sig, kBits);
  key.append(reinterpret_cast<const char*>(form.packed.data()), form.packed.size());
  return key;
}

std::vector<Verdict> decide(BandConfirmer& c, TwoTierSet& set,
                            const std::vector<std::string>& keys) {
  std::vector<KeyRef> refs;
  for (const std::string& k : keys) {
    refs.push_back({hash_key(std::string_view(k).substr(0, kBandKeyBytes)), k});
  }
  std::vector<Verdict> out(refs.size());
  c.decide(set, refs, out);
  return out;
}

TEST(BandConfirmation, MatchesCountEqualLowBits) {
  const std::vector<std::uint32_t> a = {0x10, 0x21, 0x32, 0x43};
  const std::vector<std::uint32_t> b = {0x00, 0x01, 0x02, 0x43};  // low nibbles 0 1 2 3
  for (const std::uint32_t bits : {1U, 2U, 4U, 8U, 16U, 32U}) {
    const BbitSignature x = pack_bbit(a, bits);
    const BbitSignature y = pack_bbit(b, bits);
    EXPECT_EQ(bbit_matches(x.packed, y.packed, 4, bits),
              static_cast<std::uint32_t>(bbit_match_fraction(x, y) * 4 + 0.5))
        << bits;
  }
  EXPECT_EQ(bbit_matches(pack_bbit(a, 4).packed, pack_bbit(b, 4).packed, 4, 4), 4U);
  EXPECT_EQ(bbit_matches(pack_bbit(a, 8).packed, pack_bbit(b, 8).packed, 4, 8), 1U);
  EXPECT_DOUBLE_EQ(bbit_estimate(16, 16, 4), 1.0);
  EXPECT_DOUBLE_EQ(bbit_estimate(1, 16, 4), 0.0);  // chance level
  EXPECT_DOUBLE_EQ(bbit_estimate(9, 16, 4), (9.0 / 16 - 1.0 / 16) / (15.0 / 16));
}

TEST(BandConfirmation, HitsAtOrAboveTheThresholdAreConfirmed) {
  TwoTierSet set(params(), {0, 8});
  // 13 of 16 equal: (13/16 - 1/16) / (15/16) = 0.8 exactly.
  BandConfirmer c(0.8, kValues, kBits);
  EXPECT_EQ(c.wire_bytes(), kBandKeyBytes + 8);
  const auto first = decide(c, set, {wire("A", signature(16)), wire("B", signature(16))});
  EXPECT_TRUE(is_kept(first[0]) && is_kept(first[1]));
  const auto hits = decide(c, set,
                           {wire("A", signature(13)), wire("B", signature(12)),
                            wire("C", signature(0)), wire("C", signature(0))});
  EXPECT_EQ(hits[0], Verdict::kDuplicate);       // 0.8 >= 0.8
  EXPECT_EQ(hits[1], Verdict::kUnconfirmedHit);  // 0.733 < 0.8
  EXPECT_TRUE(hits[2] == Verdict::kNew || hits[2] == Verdict::kNewAfterFalsePositive);
  EXPECT_EQ(hits[3], Verdict::kDuplicate);  // the same batch's C, the same form
  EXPECT_EQ(c.counters().confirmed, 2U);
  EXPECT_EQ(c.counters().unconfirmed, 1U);
  EXPECT_EQ(c.forms(), 3U);
  // B's form stays the first record's: the unconfirmed hit replaced nothing.
  EXPECT_EQ(decide(c, set, {wire("B", signature(16))})[0], Verdict::kDuplicate);
  EXPECT_EQ(decide(c, set, {wire("B", signature(12))})[0], Verdict::kUnconfirmedHit);
}

TEST(BandConfirmation, RefusesWhatItCannotDecide) {
  EXPECT_THROW(BandConfirmer(0.0, kValues, kBits), std::invalid_argument);
  EXPECT_THROW(BandConfirmer(1.5, kValues, kBits), std::invalid_argument);
  EXPECT_THROW(BandConfirmer(0.5, kValues, 3), std::invalid_argument);
  TwoTierSet set(params(), {0, 8});
  BandConfirmer c(0.5, kValues, kBits);
  EXPECT_THROW((void)decide(c, set, {"short"}), std::invalid_argument);
  // A key tier 2 holds that this confirmer never saw inserted.
  const std::string band(kBandKeyBytes, 'Z');
  Verdict v = set.decide({hash_key(band), band});
  ASSERT_TRUE(is_kept(v));
  EXPECT_THROW((void)decide(c, set, {wire(band, signature(16))}), std::logic_error);
}

// A tier-2 slice holding band keys `names` (in this order) as a view.
struct SliceOfKeys {
  std::vector<std::uint64_t> fingerprints;
  std::vector<std::uint64_t> offsets{0};
  std::string bytes;
  [[nodiscard]] SliceBaseView view() const { return {fingerprints, offsets, bytes}; }
};

SliceOfKeys slice_of(const std::vector<std::string>& names) {
  SliceOfKeys s;
  for (const std::string& name : names) {
    s.fingerprints.push_back(s.fingerprints.size());
    s.bytes += wire(name, {}).substr(0, kBandKeyBytes);
    s.offsets.push_back(s.bytes.size());
  }
  return s;
}

BandKey band_key(const std::string& name) {
  BandKey k;
  std::memcpy(k.data(), wire(name, {}).data(), kBandKeyBytes);
  return k;
}

// What a resume does: the forms written out per slice in the slice's key
// order, read back into a new confirmer beside a tier 2 holding the same
// keys, which then decides every later hit as the first confirmer would.
TEST(BandConfirmation, FormsRoundTripThroughASliceStream) {
  TwoTierSet first_set(params(), {0, 8});
  BandConfirmer first(0.8, kValues, kBits);
  (void)decide(first, first_set, {wire("A", signature(16)), wire("B", signature(14))});
  EXPECT_EQ(first.form_bytes(), 8U);
  const SliceOfKeys slice = slice_of({"B", "A"});
  const std::vector<std::uint8_t> stream = slice_form_stream(first, slice.view());
  ASSERT_EQ(stream.size(), 2 * first.form_bytes());
  const BbitSignature b_form = pack_bbit(signature(14), kBits);
  EXPECT_TRUE(std::equal(b_form.packed.begin(), b_form.packed.end(), stream.begin()));

  TwoTierSet resumed_set(params(), {0, 8});
  for (const char* name : {"A", "B"}) {
    const std::string band = wire(name, {}).substr(0, kBandKeyBytes);
    ASSERT_TRUE(is_kept(resumed_set.decide({hash_key(band), band})));
  }
  BandConfirmer resumed(0.8, kValues, kBits);
  EXPECT_EQ(adopt_slice_form_stream(resumed, slice.view(), stream), 2U);
  EXPECT_EQ(adopt_slice_form_stream(resumed, slice.view(), stream), 0U);  // the first stays
  const std::vector<std::string> later = {wire("A", signature(13)), wire("A", signature(12)),
                                          wire("B", signature(14)), wire("B", signature(16))};
  EXPECT_EQ(decide(resumed, resumed_set, later), decide(first, first_set, later));
  EXPECT_EQ(decide(resumed, resumed_set, {wire("A", signature(13))})[0], Verdict::kDuplicate);
  EXPECT_EQ(decide(resumed, resumed_set, {wire("A", signature(12))})[0], Verdict::kUnconfirmedHit);
}

TEST(BandConfirmation, AdoptedFormsNeverReplaceTheFirst) {
  BandConfirmer c(0.5, kValues, kBits);
  EXPECT_TRUE(c.find_form(band_key("A")).empty());
  const BbitSignature a = pack_bbit(signature(16), kBits);
  const BbitSignature other = pack_bbit(signature(0), kBits);
  EXPECT_TRUE(c.adopt_form(band_key("A"), a.packed));
  EXPECT_FALSE(c.adopt_form(band_key("A"), other.packed));
  const std::span<const std::uint8_t> kept = c.find_form(band_key("A"));
  EXPECT_TRUE(std::equal(kept.begin(), kept.end(), a.packed.begin(), a.packed.end()));
  EXPECT_EQ(c.forms(), 1U);
  EXPECT_THROW((void)c.adopt_form(band_key("B"), std::span(a.packed).first(3)),
               std::invalid_argument);
}

TEST(BandConfirmation, SliceStreamsRefuseWhatDoesNotFit) {
  BandConfirmer c(0.5, kValues, kBits);
  ASSERT_TRUE(c.adopt_form(band_key("A"), pack_bbit(signature(16), kBits).packed));
  // A key without a form: the writer must not write a state that lacks it.
  EXPECT_THROW((void)slice_form_stream(c, slice_of({"A", "B"}).view()), std::logic_error);
  // A stream one form short, or one byte long.
  const std::vector<std::uint8_t> one(c.form_bytes(), 0);
  EXPECT_THROW((void)adopt_slice_form_stream(c, slice_of({"B", "C"}).view(), one),
               std::invalid_argument);
  EXPECT_EQ(c.forms(), 1U);  // nothing taken
  // A tier-2 key that is not a band key (another unit's state).
  SliceOfKeys odd;
  odd.fingerprints = {1};
  odd.bytes = "not a band key";
  odd.offsets = {0, odd.bytes.size()};
  EXPECT_THROW((void)slice_form_stream(c, odd.view()), std::invalid_argument);
  EXPECT_THROW((void)adopt_slice_form_stream(c, odd.view(), one), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::core

namespace bloomshard::core {
namespace {

// A wire key with a position: the band key, the form, the record's position.
std::string wire_at(const std::string& name, const std::vector<std::uint32_t>& sig,
                    std::uint64_t position) {
  std::string key = wire(name, sig);
  key.append(reinterpret_cast<const char*>(&position), sizeof position);
  return key;
}

std::vector<BandMatch> decide_answered(BandConfirmer& c, TwoTierSet& set,
                                       const std::vector<std::string>& keys,
                                       std::vector<Verdict>& out) {
  std::vector<KeyRef> refs;
  for (const std::string& k : keys) {
    refs.push_back({hash_key(std::string_view(k).substr(0, kBandKeyBytes)), k});
  }
  out.assign(refs.size(), Verdict::kNew);
  std::vector<std::uint8_t> answers(refs.size() * kBandMatchBytes, 0xEE);
  c.decide(set, refs, out, answers);
  std::vector<BandMatch> matches;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    matches.push_back(get_band_match(answers.data() + i * kBandMatchBytes));
  }
  return matches;
}

TEST(BandConfirmation, PositionsAnswerEachHitWithItsFirstRecord) {
  TwoTierSet set(params(), {0, 8});
  BandConfirmer c(0.8, kValues, kBits, true);
  EXPECT_TRUE(c.keeps_positions());
  EXPECT_EQ(c.wire_bytes(), kBandKeyBytes + 8 + kBandPositionBytes);
  std::vector<Verdict> v;
  // A and B inserted by records at 100 and 200; a later copy of A in the
  // same batch (another record, so not combined) is answered with 100.
  auto m = decide_answered(c, set,
                           {wire_at("A", signature(16), 100), wire_at("B", signature(16), 200),
                            wire_at("A", signature(16), 300)},
                           v);
  EXPECT_TRUE(is_kept(v[0]) && is_kept(v[1]));
  EXPECT_EQ(m[0].position, 0U);
  EXPECT_EQ(m[0].matches, 0U);
  EXPECT_EQ(v[2], Verdict::kDuplicate);
  EXPECT_EQ(m[2].position, 100U);
  EXPECT_EQ(m[2].matches, kValues);
  // Later batches: a confirmed hit and an unconfirmed one, each answered
  // with the first record's position and the matching values.
  m = decide_answered(c, set, {wire_at("A", signature(13), 400), wire_at("B", signature(12), 500)},
                      v);
  EXPECT_EQ(v[0], Verdict::kDuplicate);
  EXPECT_EQ(m[0].position, 100U);
  EXPECT_EQ(m[0].matches, 13U);
  EXPECT_EQ(v[1], Verdict::kUnconfirmedHit);
  EXPECT_EQ(m[1].position, 200U);
  EXPECT_EQ(m[1].matches, 12U);
  BandKey a{};
  std::memcpy(a.data(), "A", 1);
  EXPECT_EQ(c.find_position(a), 100U);  // never replaced by a later record
  // A form adopted from a state has no position: 0, "unknown".
  BandKey d{};
  std::memcpy(d.data(), "D", 1);
  EXPECT_TRUE(c.adopt_form(d, pack_bbit(signature(16), kBits).packed));
  EXPECT_EQ(c.find_position(d), 0U);
  // 8 more bytes a key in the plan's figure, and 4 for the run ordinal.
  EXPECT_EQ(confirm_table_bytes(10, kValues, kBits, true),
            confirm_table_bytes(10, kValues, kBits) + 10 * (kBandPositionBytes + 4));
}

TEST(BandConfirmation, PositionsAndAnswersGoTogether) {
  TwoTierSet set(params(), {0, 8});
  BandConfirmer with(0.8, kValues, kBits, true);
  EXPECT_THROW(decide(with, set, {wire_at("A", signature(16), 1)}), std::invalid_argument);
  std::vector<Verdict> v;
  EXPECT_THROW(decide_answered(with, set, {wire("A", signature(16))}, v),
               std::invalid_argument);  // a wire key without its position
  BandConfirmer without(0.8, kValues, kBits);
  EXPECT_THROW(decide_answered(without, set, {wire("A", signature(16))}, v), std::invalid_argument);
  BandMatch m{0x0102030405060708ULL, 77, 0xA0B0C0D0U};
  std::uint8_t bytes[kBandMatchBytes];
  put_band_match(m, bytes);
  const BandMatch back = get_band_match(bytes);
  EXPECT_EQ(back.position, m.position);
  EXPECT_EQ(back.matches, m.matches);
  EXPECT_EQ(back.run, m.run);
}

BandKey named(const char* name) {
  BandKey k{};
  std::memcpy(k.data(), name, std::strlen(name));
  return k;
}

// Origins: the run ordinal stamped on inserts and answered with a hit, an
// adopted origin kept, and both following their forms when others are
// forgotten (a window's expiry renumbers the forms).
TEST(BandConfirmation, OriginsNameTheRunThatInsertedEachKey) {
  TwoTierSet set(params(), {0, 8});
  BandConfirmer c(0.8, kValues, kBits, true);
  EXPECT_TRUE(c.adopt_form(named("S"), pack_bbit(signature(16), kBits).packed,
                           FormOrigin{2, 4242}));  // from the state: run 2
  c.set_run(3);
  std::vector<Verdict> v;
  auto m = decide_answered(c, set,
                           {wire_at("A", signature(16), 100), wire_at("B", signature(16), 200)}, v);
  EXPECT_EQ(c.find_origin(named("A")), (FormOrigin{3, 100}));
  EXPECT_EQ(c.find_origin(named("S")), (FormOrigin{2, 4242}));
  // S's tier-2 key came with the state: insert it, then a hit on it is
  // answered with the state's run and position.
  const BandKey s_key = named("S");
  const std::string s_band(reinterpret_cast<const char*>(s_key.data()), s_key.size());
  ASSERT_TRUE(is_kept(set.decide({hash_key(s_band), s_band})));
  m = decide_answered(c, set, {wire_at("S", signature(15), 900), wire_at("A", signature(16), 901)},
                      v);
  EXPECT_EQ(v[0], Verdict::kDuplicate);
  EXPECT_EQ(m[0].run, 2U);
  EXPECT_EQ(m[0].position, 4242U);
  EXPECT_EQ(m[1].run, 3U);
  EXPECT_EQ(m[1].position, 100U);
  // Forgetting A renumbers B after it: B keeps its own origin.
  const BandKey gone[] = {named("A")};
  EXPECT_EQ(c.forget_forms(gone), 1U);
  EXPECT_EQ(c.find_origin(named("B")), (FormOrigin{3, 200}));
  EXPECT_EQ(c.find_origin(named("S")), (FormOrigin{2, 4242}));
  EXPECT_EQ(c.find_origin(named("A")), (FormOrigin{}));
  // A run beyond what a confirmer keeps is refused, not wrapped.
  EXPECT_THROW((void)c.adopt_form(named("T"), pack_bbit(signature(16), kBits).packed,
                                  FormOrigin{kMaxOriginRun + 1, 1}),
               std::invalid_argument);
  // Without positions an adopted origin is dropped.
  BandConfirmer plain(0.8, kValues, kBits);
  EXPECT_TRUE(
      plain.adopt_form(named("S"), pack_bbit(signature(16), kBits).packed, FormOrigin{2, 4242}));
  EXPECT_EQ(plain.find_origin(named("S")), (FormOrigin{}));
}

// The refusals the whole-suite coverage run found untaken
// (tests/coverage/reasons/core.txt): a confirmer of no values, an origin
// form of another size, answers or verdicts of another count, and the
// origin streams asked of or given to a confirmer without positions, for a
// key without a form, or of another length; positions are 0 where none
// are kept or the key is unknown.
TEST(BandConfirmation, EveryMisfitOfFormsOriginsAndAnswersIsRefused) {
  EXPECT_THROW(BandConfirmer(0.5, 0, kBits), std::invalid_argument);
  BandConfirmer with(0.8, kValues, kBits, true);
  const BbitSignature form = pack_bbit(signature(16), kBits);
  EXPECT_THROW((void)with.adopt_form(named("A"), std::span(form.packed).first(3), FormOrigin{1, 5}),
               std::invalid_argument);
  ASSERT_TRUE(with.adopt_form(named("A"), form.packed, FormOrigin{1, 5}));
  EXPECT_EQ(with.find_position(named("A")), 5U);
  EXPECT_EQ(with.find_position(named("Q")), 0U);  // not known
  BandConfirmer without(0.8, kValues, kBits);
  ASSERT_TRUE(without.adopt_form(named("A"), form.packed));
  EXPECT_EQ(without.find_position(named("A")), 0U);  // no positions kept

  TwoTierSet set(params(), {0, 8});
  const std::string a = wire_at("A", signature(16), 1);
  const std::vector<KeyRef> refs{{hash_key(std::string_view(a).substr(0, kBandKeyBytes)), a}};
  std::vector<Verdict> out(1);
  std::vector<std::uint8_t> answers(kBandMatchBytes + 1);
  EXPECT_THROW(with.decide(set, refs, out, answers), std::invalid_argument);
  answers.resize(kBandMatchBytes);
  std::vector<Verdict> two(2);
  EXPECT_THROW(with.decide(set, refs, two, answers), std::invalid_argument);
  EXPECT_EQ(set.counters().decided, 0U);  // refused before any key was decided

  const SliceOfKeys slice = slice_of({"A"});
  EXPECT_THROW((void)slice_origin_stream(without, slice.view()), std::logic_error);
  EXPECT_THROW((void)slice_origin_stream(with, slice_of({"A", "B"}).view()), std::logic_error);
  const std::vector<std::uint8_t> origins = slice_origin_stream(with, slice.view());
  ASSERT_EQ(origins.size(), kFormOriginBytes);
  const std::vector<std::uint8_t> forms = slice_form_stream(with, slice.view());
  BandConfirmer resumed(0.8, kValues, kBits, true);
  BandConfirmer plain(0.8, kValues, kBits);
  EXPECT_THROW((void)adopt_slice_form_stream(plain, slice.view(), forms, origins),
               std::invalid_argument);
  const std::vector<std::uint8_t> short_origins(origins.begin(), origins.end() - 1);
  EXPECT_THROW((void)adopt_slice_form_stream(resumed, slice.view(), forms, short_origins),
               std::invalid_argument);
  const std::vector<std::uint8_t> long_forms(forms.size() + 1, 0);
  EXPECT_THROW((void)adopt_slice_form_stream(resumed, slice.view(), long_forms, origins),
               std::invalid_argument);
  EXPECT_EQ(resumed.forms(), 0U);  // nothing taken
  EXPECT_EQ(adopt_slice_form_stream(resumed, slice.view(), forms, origins), 1U);
  EXPECT_EQ(resumed.find_origin(named("A")), (FormOrigin{1, 5}));
}

}  // namespace
}  // namespace bloomshard::core
