#pragma once

namespace stepscope {

// Sets up CUPTI for the session (called from InitializeInjection). Always
// returns 1: a failure disables tracing with one warning, the program runs on.
int InitializeCupti();

// CUPTI's unified-memory activity kind is enabled (per-migration records).
bool UnifiedMemoryActivityOn();

}  // namespace stepscope
