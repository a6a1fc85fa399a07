#pragma once

namespace stepscope {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace stepscope
