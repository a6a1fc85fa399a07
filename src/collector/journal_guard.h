// The journal keeper: a small process outside the job's process groups that
// keeps a trace's main .sqlite file whole when the launcher is killed with
// SIGKILL (docs/capture.md, "Nothing lost at death").
//
// The collector commits with a rollback journal: a kill that lands inside a
// commit's page writes leaves a main file that only its hot -journal makes
// whole. The launcher starts `stepscope _guard` once, in a session of its
// own (a kill of the launcher's and the program's process groups does not
// reach it), and tells it over a pipe which traces are being written and
// which are finalized. When the pipe ends without a clean goodbye (the
// launcher died), the keeper opens each trace still being written: SQLite
// rolls the hot journal back into the main file and removes it, so the file
// alone holds every committed record. A normal end costs nothing.
#pragma once

#include <string>

namespace stepscope::journal_guard {

// Starts `exe _guard` (exe: this stepscope binary). False (and nothing
// else changes) if it cannot be started; traces are written as before.
bool Start(const std::string& exe);

// A trace the collector writes / has finalized (or removed). No-ops before
// Start() or after Stop(); never blocks (a full pipe drops the line).
void Opened(const std::string& path);
void Closed(const std::string& path);

// A clean end: the keeper exits without touching anything.
void Stop();

// The body of `stepscope _guard`: reads the lines on fd until it ends, then
// repairs what is still open. Returns the exit status.
int RunKeeper(int fd);

// Rolls a hot journal beside `path` back into it (opening the database does
// it). True when no -journal is left.
bool Repair(const std::string& path);

}  // namespace stepscope::journal_guard
