// The counter tables: operator+= of DecisionCounters and QueryCounters adds
// every field (walking the table), and each table names every field once.
#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "bloomshard/core/membership_query.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::core {
namespace {

template <class Counters, std::size_t N>
void expect_adds_every_field(const CounterOf<Counters> (&fields)[N]) {
  Counters a;
  Counters b;
  std::uint64_t v = 1;
  for (const CounterOf<Counters>& f : fields) {
    a.*f.member = v;
    b.*f.member = 1000 * v;
    ++v;
  }
  a += b;
  v = 1;
  for (const CounterOf<Counters>& f : fields) {
    EXPECT_EQ(a.*f.member, 1001 * v) << f.name;
    EXPECT_EQ(b.*f.member, 1000 * v) << f.name << " (the right side is unchanged)";
    ++v;
  }
}

template <class Counters, std::size_t N>
void expect_distinct_names_and_members(const CounterOf<Counters> (&fields)[N]) {
  std::set<std::string_view> names;
  Counters probe;
  for (const CounterOf<Counters>& f : fields) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name << " twice";
    EXPECT_EQ(probe.*f.member, 0U) << f.name << " named twice (its member was set already)";
    probe.*f.member = 1;
  }
}

TEST(CounterTable, DecisionCountersAddEveryField) {
  expect_adds_every_field(kDecisionCounterFields);
  expect_distinct_names_and_members(kDecisionCounterFields);
}

TEST(CounterTable, QueryCountersAddEveryField) {
  expect_adds_every_field(kQueryCounterFields);
  expect_distinct_names_and_members(kQueryCounterFields);
}

}  // namespace
}  // namespace bloomshard::core
