#include "app/options/option_table.hpp"

#include <stdexcept>
#include <string>

namespace bloomshard::app {
namespace po = boost::program_options;

void add_in_order(po::options_description& out,
                  std::initializer_list<const po::options_description*> pools,
                  std::span<const std::string_view> names) {
  for (const std::string_view name : names) {
    bool found = false;
    for (const po::options_description* pool : pools) {
      for (const auto& option : pool->options()) {
        if (option->long_name() == name) {
          out.add(option);
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) throw std::logic_error("no option group registers --" + std::string(name));
  }
}

}  // namespace bloomshard::app
