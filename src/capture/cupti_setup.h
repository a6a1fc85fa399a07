#pragma once

namespace stepscope {

// Sets up CUPTI for the session (called from InitializeInjection). Always
// returns 1: a failure disables tracing with one warning, the program runs on.
int InitializeCupti();

// CUPTI's unified-memory activity kind is enabled (per-migration records).
bool UnifiedMemoryActivityOn();

// STEPSCOPE_DIAG_DETACH (diagnostics): subscribes to CUPTI again after a
// window's end detached it. Returns 1 when CUPTI is attached afterwards, 0
// when it is not (no detach pending, or the attach failed: the session is
// then off, with one warning).
int DiagAttachCupti();

}  // namespace stepscope
