// The flush kernel is hand-written PTX rather than CUDA C, so this library
// needs no CUDA compiler to build: each thread reads 8-byte words with
// ld.global.cg (cached in L2, not L1) in a grid-stride loop and XORs them;
// the result is stored only if it equals a constant the zeroed buffer never
// produces, which keeps the loads from being optimized away. The driver
// functions are looked up in the already loaded libcuda (this library does
// not link it).
#include "roofline/inject/l2_flush.h"

#include <dlfcn.h>

#include <mutex>

namespace stepscope::inject {
namespace {

constexpr const char* kFlushPtx = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .entry stepscope_l2_flush(
    .param .u64 buf,
    .param .u64 words,
    .param .u64 sink)
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [buf];
    ld.param.u64 %rd2, [words];
    ld.param.u64 %rd3, [sink];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r4, %r2;
    mov.u64 %rd7, 0;
LOOP:
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra DONE;
    shl.b64 %rd8, %rd4, 3;
    add.u64 %rd9, %rd1, %rd8;
    ld.global.cg.u64 %rd10, [%rd9];
    xor.b64 %rd7, %rd7, %rd10;
    add.u64 %rd4, %rd4, %rd6;
    bra LOOP;
DONE:
    setp.ne.u64 %p2, %rd7, 6616556232458871189;
    @%p2 bra END;
    st.global.u64 [%rd3], %rd7;
END:
    ret;
}
)";

struct Driver {
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
};

struct FlushState {
  std::mutex mu;
  bool tried = false;
  bool ready = false;
  std::string error;
  Driver d;
  CUcontext ctx = nullptr;
  CUfunction fn = nullptr;
  CUdeviceptr buf = 0;
  CUdeviceptr sink = 0;
  size_t words = 0;
  int blocks = 0;
};
FlushState* g_flush = new FlushState();  // never destroyed: used from callbacks until exit

template <typename F>
bool Lookup(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(::dlsym(lib, name));
  return *fn != nullptr;
}

bool SetUp(FlushState& s, CUcontext ctx) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) {
    s.error = "libcuda.so.1 is not loaded";
    return false;
  }
  Driver& d = s.d;
  bool ok = Lookup(lib, "cuCtxGetDevice", &d.ctx_get_device) &&
            Lookup(lib, "cuDeviceGetAttribute", &d.device_get_attribute) &&
            Lookup(lib, "cuModuleLoadData", &d.module_load_data) &&
            Lookup(lib, "cuModuleGetFunction", &d.module_get_function) &&
            Lookup(lib, "cuMemAlloc_v2", &d.mem_alloc) &&
            Lookup(lib, "cuMemFree_v2", &d.mem_free) &&
            Lookup(lib, "cuMemsetD8_v2", &d.memset_d8) &&
            Lookup(lib, "cuLaunchKernel", &d.launch_kernel) &&
            Lookup(lib, "cuCtxSynchronize", &d.ctx_synchronize);
  if (!ok) {
    s.error = "a CUDA driver function for the L2 flush is missing";
    return false;
  }
  CUdevice dev = 0;
  int l2 = 0, sms = 0;
  if (d.ctx_get_device(&dev) != CUDA_SUCCESS ||
      d.device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) != CUDA_SUCCESS ||
      d.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS ||
      l2 <= 0 || sms <= 0) {
    s.error = "cannot read the device's L2 size";
    return false;
  }
  CUmodule mod = nullptr;
  CUresult r = d.module_load_data(&mod, kFlushPtx);
  if (r != CUDA_SUCCESS ||
      d.module_get_function(&s.fn, mod, "stepscope_l2_flush") != CUDA_SUCCESS) {
    s.error = "cannot load the L2 flush kernel (CUresult " + std::to_string(r) + ")";
    return false;
  }
  const size_t bytes = 2 * static_cast<size_t>(l2);
  if (d.mem_alloc(&s.buf, bytes) != CUDA_SUCCESS || d.mem_alloc(&s.sink, 8) != CUDA_SUCCESS ||
      d.memset_d8(s.buf, 0, bytes) != CUDA_SUCCESS) {
    s.error = "cannot allocate " + std::to_string(bytes >> 20) + " MiB for the L2 flush";
    return false;
  }
  s.words = bytes / 8;
  s.blocks = 4 * sms;
  s.ctx = ctx;
  return true;
}

}  // namespace

bool FlushL2(CUcontext ctx, std::string* error) {
  FlushState& s = *g_flush;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.tried) {
    s.tried = true;
    s.ready = SetUp(s, ctx);
  }
  if (!s.ready || ctx != s.ctx) {
    *error = s.ready ? "the L2 flush is set up in another context" : s.error;
    return false;
  }
  void* args[] = {&s.buf, &s.words, &s.sink};
  CUresult r = s.d.launch_kernel(s.fn, static_cast<unsigned>(s.blocks), 1, 1, 512, 1, 1, 0, nullptr,
                                 args, nullptr);
  if (r == CUDA_SUCCESS) r = s.d.ctx_synchronize();
  if (r != CUDA_SUCCESS) {
    *error = "the L2 flush failed (CUresult " + std::to_string(r) + ")";
    return false;
  }
  return true;
}

void ReleaseL2Flush() {
  FlushState& s = *g_flush;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.ready && s.buf) s.d.mem_free(s.buf);
  if (s.ready && s.sink) s.d.mem_free(s.sink);
  s.buf = s.sink = 0;
  s.ready = false;
}

}  // namespace stepscope::inject
