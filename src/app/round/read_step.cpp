#include "app/round/read_step.hpp"

#include "io/errors.hpp"

namespace bloomshard::app {

void read_round(InputFeed& feed, RoundBatch& batch, std::string& input_error) {
  if (feed.exhausted()) {
    batch.clear();
    return;
  }
  try {
    feed.fill(batch);
  } catch (const io::InputError& e) {
    input_error = e.what();
    feed.abandon();
  }
}

}  // namespace bloomshard::app
