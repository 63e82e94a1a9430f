// A counter struct described once, as a table of its fields (name and
// member), so that adding, reducing or printing the struct walks the table
// instead of repeating every field: a new counter is one line in its table.
#pragma once

#include <cstdint>
#include <iterator>  // std::size, for the tables' completeness checks
#include <span>
#include <string_view>

namespace bloomshard::core {

/// One std::uint64_t counter of `Counters`: its name (as metrics and JSON
/// write it) and its member.
template <class Counters>
struct CounterOf {
  std::string_view name;
  std::uint64_t Counters::*member;
};

/// to.f += from.f for every field f of `fields`.
template <class Counters>
constexpr void add_counters(Counters& to, const Counters& from,
                            std::span<const CounterOf<Counters>> fields) noexcept {
  for (const CounterOf<Counters>& f : fields) to.*f.member += from.*f.member;
}

}  // namespace bloomshard::core
