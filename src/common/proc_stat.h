// /proc/PID/stat (proc(5)), read in one place: the tracer's hello, the
// launcher's hello for the program it samples, and the collector's check
// that a traced pid is still the process it traced.
#pragma once

#include <string>

namespace stepscope {

struct ProcStat {
  char state = '?';              // field 3: R, S, D, Z, ...
  std::string start_time_ticks;  // field 22: start time after boot, clock ticks (as text)
};

// False when the process is gone or the file is malformed.
bool ReadProcStat(int pid, ProcStat* out);

}  // namespace stepscope
