#pragma once

namespace stepscope {

// Sets up CUPTI for the session (called from InitializeInjection). Always
// returns 1: a failure disables tracing with one warning, the program runs on.
int InitializeCupti();

}  // namespace stepscope
