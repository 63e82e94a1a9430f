// Builds a small scalable Bloom filter from the installed core and checks
// that every inserted key is found and that fresh keys are mostly absent.
#include <cstdio>
#include <string>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"

int main() {
  namespace core = bloomshard::core;
  core::ScalableBloomParams params;
  params.initial_capacity = 10'000;
  params.fpr_target = 0.01;
  params.num_slices = 16;
  core::ScalableBloom bloom(params, core::SliceRange{0, params.num_slices});
  for (int i = 0; i < 10'000; ++i) bloom.insert(core::hash_key("seen-" + std::to_string(i)));
  int missing = 0;
  for (int i = 0; i < 10'000; ++i) {
    missing += bloom.may_contain(core::hash_key("seen-" + std::to_string(i))) ? 0 : 1;
  }
  int false_positives = 0;
  for (int i = 0; i < 10'000; ++i) {
    false_positives += bloom.may_contain(core::hash_key("fresh-" + std::to_string(i))) ? 1 : 0;
  }
  std::printf("missing %d, false positives %d of 10000\n", missing, false_positives);
  // No false negative ever; 1% target, so 300 of 10000 is far outside it.
  return missing == 0 && false_positives < 300 ? 0 : 1;
}
