// posix_spawn attributes for stepscope's own helper processes (the collector a
// tracer starts, the launcher's journal keeper), set in one place.
#pragma once

#include <signal.h>
#include <spawn.h>

namespace stepscope {

// Initializes `attr` for a helper that must not inherit what its parent (the
// traced program, or the launcher) does with signals: none blocked, every one
// at its default; in a session of its own, so that a signal to the program's
// or the launcher's process group (a terminal's hangup, `kill -- -PGID`)
// misses it. posix_spawnattr_destroy() it after the spawn.
inline void InitHelperSpawnAttr(posix_spawnattr_t* attr) {
  posix_spawnattr_init(attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(attr, &none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setflags(attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

}  // namespace stepscope
