// CUPTI's record walker and callback names, loaded at run time in the
// collector: the stepscope binary does not link CUPTI (it must run where no
// CUDA is installed). The tracer library links it, so loading the tracer
// (RTLD_LOCAL, nothing is initialized) brings in the very CUPTI the traced
// program used.
#pragma once

#include <cupti.h>

#include <string>

#include "collector/cupti_decoder.h"
#include "common/status.h"

namespace stepscope {

struct CuptiFunctions {
  NextRecordFn next_record = nullptr;
  CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
};

// Loads (once per process) the CUPTI that `inject_lib` depends on.
StatusOr<CuptiFunctions> LoadCupti(const std::string& inject_lib);

}  // namespace stepscope
