// The numbers of a metrics document as a table: each field its JSON name and
// its member, written in table order by one function, so a field is one
// table line and the dedup and query documents share the writer. Counts are
// unsigned 64-bit, 32-bit ones widened; measures are doubles.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "app/report/json_writer.hpp"

namespace bloomshard::app {

template <class T>
struct JsonField {
  std::string_view name;
  std::variant<std::uint64_t T::*, std::uint32_t T::*, double T::*> member;
};

/// Writes `fields` of `v` into the open object of `j`, in table order.
template <class T, std::size_t N>
void write_fields(JsonWriter& j, const T& v, const JsonField<T> (&fields)[N]) {
  for (const JsonField<T>& f : fields) {
    std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<decltype(member), std::uint32_t T::*>) {
            j.value(f.name, static_cast<std::uint64_t>(v.*member));
          } else {
            j.value(f.name, v.*member);
          }
        },
        f.member);
  }
}

}  // namespace bloomshard::app
