#include "app/options/minhash_options.hpp"

#include <stdexcept>

#include "core/minhash/shingle.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;

void add_minhash_options(po::options_description& job, MinHashFlags& f) {
  // clang-format off
  job.add_options()
    ("shingle", po::value(&f.shingle)->default_value(f.shingle),
     "--unit minhash: shingles of the normalized text, word:N (N words) | char:N (N code "
     "points), 1 <= N <= 64 (docs/near-duplicates.md)")
    ("bands", po::value(&f.bands)->default_value(f.bands),
     "--unit minhash: band keys per record (B); the signature has B x R values, at most 4096")
    ("rows", po::value(&f.rows)->default_value(f.rows),
     "--unit minhash: signature values per band (R)");
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
}

}  // namespace bloomshard::app
