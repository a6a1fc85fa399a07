// The subprocess launcher of `profile` and `roofline`: runs the user's program
// as a child so that, for signals, it is as if stepscope were not there.
//
//   - A signal ignored when stepscope starts (nohup, `cmd &` in a script) stays
//     ignored in the program: the launcher installs no handler for it, and
//     exec keeps SIG_IGN.
//   - The program runs in its own process group. A signal sent to the
//     launcher (to its pid, or to its process group, e.g. by `timeout` or
//     `kill -TERM -PGID`) is forwarded to the program's pid once, so the
//     program sees it once, as it would bare. The same signal from the same
//     sender within 100 ms is forwarded once (`timeout` signals our pid and
//     then our group; a bare program absorbs the second as still pending).
//     The program's own children get such a signal only through the program
//     (torchrun forwards to its workers); terminal signals reach them all.
//   - When the launcher is in its terminal's foreground, the program's group
//     gets the terminal for the run (tcsetpgrp), so Ctrl-C, Ctrl-\ and Ctrl-Z
//     reach the program (and its children) directly, and it can read the
//     terminal (pdb). When the program stops (Ctrl-Z) the launcher takes the
//     terminal back and stops too, so that the shell sees the job stopped;
//     `fg`/`bg` continue both. A program started in the background that
//     reads the terminal stops the launcher likewise; `fg` gives it the
//     terminal.
//   - Terminal signals that stop or kill the program are replayed on the
//     launcher's own process group, which the terminal would have signalled
//     bare: a shell script running `stepscope profile` in a loop stops on
//     Ctrl-C as it would without stepscope.
//   - The launcher ends the way the program ended: its exit code, or killed
//     by the same signal, without dumping a core of its own (a core_pattern
//     without %p would replace the program's core).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stepscope {

struct ProgramExit {
  int wait_status = 0;         // as from waitpid(2)
  bool held_terminal = false;  // the program's group was the terminal's foreground at its end

  // The exit code a shell would report: the program's, or 128 + signal.
  int ExitCode() const;
};

// Runs `command` (searched in PATH) with `env` set on top of this process's
// environment, and waits for it with the signal behavior above. kInvalidInput
// when it cannot be started (not found, not executable). `on_started`, when
// given, is called with the child's pid once exec succeeded.
StatusOr<ProgramExit> RunProgram(const std::vector<std::string>& command,
                                 const std::vector<std::pair<std::string, std::string>>& env,
                                 const std::function<void(int pid)>& on_started = nullptr);

// Checks a `profile -o` pattern before the program starts (else the whole
// job would run untraced): its syntax (capture/output_path.h), that it names
// a file with this process's environment (an unset %q{VAR} expands to ""),
// and that its directory, when no per-process token is in it, exists and is
// writable. kInvalidInput saying what to fix.
Status CheckOutputPattern(const std::string& pattern);

// Ends the launcher the way the program ended: returns its exit code, or
// dies of its signal (with core dumps of the launcher itself disabled).
// Flushes stdout and stderr first.
int FinishLikeProgram(const ProgramExit& exit);

}  // namespace stepscope
