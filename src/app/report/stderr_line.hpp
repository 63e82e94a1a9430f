// One diagnostic line to stderr in one write(2). std::cerr is unbuffered, so
// `cerr << a << b` is one write per piece; under mpiexec each rank's stderr
// is a pipe that mpiexec forwards in the chunks it reads, and a rank that
// aborts right after its message can have mpiexec's MPI_ABORT banner land in
// the middle of the line ("rank " ... banner ... "1 of 2 on vm: error: ...").
// A line written at once (below PIPE_BUF, 4096 bytes, a pipe write is atomic)
// reaches the reader whole.
#pragma once

#include <string_view>

namespace bloomshard::app {

/// Writes `line` (a '\n' is added if it has none) to stderr at once,
/// retrying on EINTR and short writes; errors are ignored (nowhere to
/// report them).
void write_stderr_line(std::string_view line) noexcept;

}  // namespace bloomshard::app
