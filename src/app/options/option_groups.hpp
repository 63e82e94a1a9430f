// A config made of option groups, for a consumer that reads only some of
// them: OptionGroups<FeedOptions, KeyOptions> is built from any config that
// holds both (DedupConfig, QueryFeed) and copies just those groups, so a
// call site passing the whole config keeps compiling while the consumer
// stores what it reads and nothing else.
#pragma once

#include <concepts>

namespace bloomshard::app {

template <class... Groups>
struct OptionGroups : Groups... {
  OptionGroups() = default;
  /// Implicit on purpose: a whole config converts to the groups it holds.
  template <class Config>
  requires(!std::same_as<Config, OptionGroups> && (std::derived_from<Config, Groups> && ...))
      OptionGroups(const Config& config)  // NOLINT(google-explicit-constructor)
      : Groups(static_cast<const Groups&>(config))... {}
};

}  // namespace bloomshard::app
