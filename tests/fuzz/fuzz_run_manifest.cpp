// libFuzzer target: the run-manifest JSON parser (what a checkpoint's
// /manifest_json holds). Any input may be refused with an exception, never
// crash; one that parses must print back to JSON that parses to the same
// manifest (printing is a fixed point after one round).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "app/run/run_manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  bloomshard::app::RunManifest m;
  try {
    m = bloomshard::app::manifest_from_json(json);
  } catch (const std::exception&) {
    return 0;  // refused with a message: the contract
  }
  const std::string once = bloomshard::app::manifest_to_json(m);  // must not throw
  const std::string twice =
      bloomshard::app::manifest_to_json(bloomshard::app::manifest_from_json(once));
  if (once != twice) std::abort();
  return 0;
}
