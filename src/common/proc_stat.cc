#include "common/proc_stat.h"

#include <fstream>
#include <iterator>
#include <vector>

#include "common/strings.h"

namespace stepscope {

bool ReadProcStat(int pid, ProcStat* out) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat", std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: fields are
  // counted after its last ')'.
  const size_t p = s.rfind(')');
  if (p == std::string::npos || p + 2 >= s.size()) return false;
  const std::vector<std::string> fields = Split(s.substr(p + 2), ' ');
  if (fields.size() < 20) return false;
  out->state = fields[0].empty() ? '?' : fields[0][0];
  out->start_time_ticks = fields[19];
  return true;
}

}  // namespace stepscope
