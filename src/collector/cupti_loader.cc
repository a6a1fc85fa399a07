#include "collector/cupti_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>

namespace stepscope {
namespace {

int FindCupti(dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name && std::strstr(info->dlpi_name, "libcupti.so")) {
    *static_cast<std::string*>(out) = info->dlpi_name;
    return 1;
  }
  return 0;
}

}  // namespace

StatusOr<CuptiFunctions> LoadCupti(const std::string& inject_lib) {
  static std::mutex mu;
  static CuptiFunctions loaded;
  std::lock_guard<std::mutex> lk(mu);
  if (loaded.next_record) return loaded;
  void* cupti = nullptr;
  std::string name;
  dl_iterate_phdr(&FindCupti, &name);  // already loaded (tests link it)
  if (name.empty() && !inject_lib.empty() && dlopen(inject_lib.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    dl_iterate_phdr(&FindCupti, &name);
  }
  if (!name.empty()) cupti = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (!cupti) cupti = dlopen("libcupti.so", RTLD_LAZY | RTLD_LOCAL);
  if (!cupti) return NotFound("cannot load CUPTI to decode the activity buffers");
  loaded.next_record = reinterpret_cast<NextRecordFn>(dlsym(cupti, "cuptiActivityGetNextRecord"));
  loaded.callback_name =
      reinterpret_cast<decltype(loaded.callback_name)>(dlsym(cupti, "cuptiGetCallbackName"));
  if (!loaded.next_record) return NotFound("CUPTI has no cuptiActivityGetNextRecord");
  return loaded;
}

}  // namespace stepscope
