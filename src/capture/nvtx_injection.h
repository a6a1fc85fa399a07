#pragma once

#include <cstdint>

namespace stepscope {

// Installs stepscope's NVTX handlers through NVTX's export table. Returns 1 on
// success, 0 when the table is unusable (NVTX then stays a no-op).
int InstallNvtxHandlers(const void* (*get_export_table)(uint32_t));

}  // namespace stepscope
