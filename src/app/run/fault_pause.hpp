// Test hook for the finishing phase of a dedup run: with
// BLOOMSHARD_FAULT_PAUSE_IN_FINISH=<point> in the environment, every rank
// stops at that point of the finish (rank 0 says so on stderr, one line
// "fault pause at <point>") and waits, so that the launcher's kill after a
// test's SIGTERM lands exactly there. Without
// the variable (every real run) it costs one getenv per point. Not a
// feature: tests/faults/finish_stop.sh uses it to make "a SIGTERM while the
// job finishes" deterministic instead of a race against the clock. Two
// points lie outside the finish (after the first checkpoint, before a
// chosen round's agreement: below), for stops at a chosen moment.
#pragma once

#include <cstdint>

namespace bloomshard::app {

/// Points, in the order the finish passes them.
inline constexpr const char* kPauseBeforeJoin = "before-join";
/// Input order with --state: the cut outputs are written into their
/// temporary files, no generation records them yet ...
inline constexpr const char* kPauseBeforeEndPassCheckpoint = "before-end-pass-checkpoint";
/// ... and then recorded in a generation, none renamed yet
/// (app/round/retracted_copies.hpp).
inline constexpr const char* kPauseBeforeEndPassRenames = "before-end-pass-renames";
inline constexpr const char* kPauseBeforeFinalCheckpoint = "before-final-checkpoint";
inline constexpr const char* kPauseInFinalCommit = "in-final-commit";  ///< rank 0 only
inline constexpr const char* kPauseAfterFinalCheckpoint = "after-final-checkpoint";
inline constexpr const char* kPauseAfterSummary = "after-summary";

/// Not in the finish: right after the first periodic checkpoint of an
/// attempt, held until this rank gets a stop request (or 60 s), so that a
/// test's stop signal always finds the job running with a checkpoint
/// behind it, however fast the job would otherwise end
/// (tests/faults/signal_exit.sh).
inline constexpr const char* kPauseAfterFirstCheckpoint = "after-first-checkpoint";

/// In the rounds: before the agreement of round N (the N-th round's end:
/// rounds count from 1), written "before-round-agreement:N", held until this
/// rank gets a stop request (or 60 s). The stop then reaches the agreement
/// of that very round on every rank, so a test chooses the round a stop
/// lands on (e.g. the one whose end closes a --window slot,
/// tests/e2e/window_case.sh), where a signal sent from outside would race
/// the rounds.
inline constexpr const char* kPauseBeforeRoundAgreement = "before-round-agreement";

/// Pauses this rank if the variable names `point` (see above); returns
/// after 60 s without a kill, so a test that forgot to signal still ends,
/// or as soon as the file named by BLOOMSHARD_FAULT_PAUSE_RELEASE exists
/// (a test that holds the job only while it sets up a fault).
void fault_pause_in_finish(const char* point, int rank);

/// Like fault_pause_in_finish, but returns as soon as this rank has a stop
/// request (stop_requested()), so the stop is handled where the job paused.
void fault_pause_until_stop(const char* point, int rank);

/// fault_pause_until_stop at kPauseBeforeRoundAgreement when the variable
/// names `round` (the number of rounds written so far); one getenv a round
/// otherwise.
void fault_pause_before_agreement(std::uint64_t round, int rank);

}  // namespace bloomshard::app
