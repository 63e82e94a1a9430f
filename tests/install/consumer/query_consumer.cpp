// Membership queries through the installed public headers: keys made under
// a key scheme (two JSON fields, NFC + casefold, a tuple), a two-tier set
// filled with half of them, then a read-only query of all of them. Prints
// the saved-format identifiers its keys depend on.
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_builder.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/membership_query.hpp"
#include "bloomshard/core/two_tier.hpp"

int main() {
  namespace core = bloomshard::core;
  core::KeyScheme scheme;
  scheme.fields = {"site", "path"};
  scheme.normalize = core::NormalizePolicy::kNfcCasefold;
  core::KeyBuilder builder(scheme);

  constexpr int kKeys = 2'000;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    const std::string site = "Site-" + std::to_string(i % 7);
    const std::string path = "/Page/" + std::to_string(i);
    const std::string_view values[] = {site, path};
    keys.emplace_back(builder.build(values));
  }
  std::vector<core::KeyRef> refs;
  for (const auto& key : keys) refs.push_back({core::hash_key(key), key});

  core::ScalableBloomParams params;
  params.initial_capacity = kKeys;
  params.fpr_target = 0.01;
  params.num_slices = 16;
  core::TwoTierSet set(params, core::SliceRange{0, params.num_slices});
  for (int i = 0; i < kKeys; i += 2) set.decide(refs[static_cast<std::size_t>(i)]);

  std::vector<std::uint8_t> hit(refs.size());
  core::QueryCounters counters;
  core::query_batch(set, refs, hit, counters);
  int wrong = 0;
  for (int i = 0; i < kKeys; ++i) wrong += hit[static_cast<std::size_t>(i)] != (i % 2 == 0);

  std::cout << "queried " << counters.queried << ", hits " << counters.hits << ", wrong " << wrong
            << "\nhash scheme: " << core::kHashSchemeName
            << "\nbloom layout: " << core::kBloomLayoutName << "\n";
  // Exact answers: every inserted key found, no other.
  return wrong == 0 && counters.hits == kKeys / 2 ? 0 : 1;
}
