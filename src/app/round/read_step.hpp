// The read step of a round, shared by dedup and query: this rank's next
// batch of records and keys from its feed. A broken input under
// --on-input-error fail does not throw out of the round (the other ranks
// would wait in its exchange): the feed is abandoned, the batch is what was
// read before the damage, and the error waits for the round's agreement.
#pragma once

#include <string>

#include "app/feed/input_feed.hpp"
#include "app/round/round_batch.hpp"

namespace bloomshard::app {

/// Fills `batch` from `feed` (an exhausted feed: an empty batch). On an
/// io::InputError the feed is abandoned and `input_error` gets its text;
/// other exceptions propagate.
void read_round(InputFeed& feed, RoundBatch& batch, std::string& input_error);

}  // namespace bloomshard::app
