#include "app/options/minhash_options.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "core/minhash/shingle.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;
namespace {

// The whole text must be a number T with 0 < T <= 1 (no "nan", no "0.8x").
double parse_confirm_jaccard(const std::string& text) {
  double t = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, t);
  if (ec != std::errc() || ptr != end || !std::isfinite(t) || t <= 0.0 || t > 1.0) {
    throw std::invalid_argument("--confirm-jaccard must be a number T with 0 < T <= 1, not '" +
                                text + "'");
  }
  return t;
}

}  // namespace

void add_minhash_options(po::options_description& job, MinHashFlags& f) {
  // clang-format off
  job.add_options()
    ("shingle", po::value(&f.shingle)->default_value(f.shingle),
     "--unit minhash: shingles of the normalized text, word:N (N words) | char:N (N code "
     "points), 1 <= N <= 64 (docs/near-duplicates.md)")
    ("bands", po::value(&f.bands)->default_value(f.bands),
     "--unit minhash: band keys per record (B); the signature has B x R values, at most 4096")
    ("rows", po::value(&f.rows)->default_value(f.rows),
     "--unit minhash: signature values per band (R)")
    ("confirm-jaccard", po::value(&f.confirm_jaccard),
     "--unit minhash: a band hit counts only when the Jaccard similarity estimated against "
     "the record that first inserted the band key reaches T, 0 < T <= 1 (4-bit forms of the "
     "signature kept beside each key; docs/near-duplicates.md section 6); off by default");
  // clang-format on
}

void apply_minhash_flags(const MinHashFlags& f, core::KeyScheme& key) {
  try {
    key.shingle = core::shingle_spec_name(core::parse_shingle_spec(f.shingle));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--shingle: ") + e.what());
  }
  if (f.bands == 0) throw std::invalid_argument("--bands must be at least 1");
  if (f.rows == 0) throw std::invalid_argument("--rows must be at least 1");
  key.bands = f.bands;
  key.rows = f.rows;
  key.confirm_jaccard = f.confirm_jaccard.empty() ? 0.0 : parse_confirm_jaccard(f.confirm_jaccard);
}

std::string minhash_flags_without_unit(const MinHashFlags& f) {
  if (f.confirm_jaccard.empty()) return {};
  return "--confirm-jaccard applies to --unit minhash only";
}

}  // namespace bloomshard::app
