/* CUDA injection libraries that do (almost) nothing: CUDA_INJECTION64_PATH set to one measures what
   the driver's injection mode alone costs a program (issue 33; tests/gpu/tracer_arms_batch.sh, arms
   empty_env, cupti_linked_env, cupti_called_env). Built by tests/gpu/stage.sh:
     plain:        nothing at all
     -DLINK_CUPTI: linked with libcupti (CUPTI loaded at cuInit), no CUPTI call
     -DCALL_CUPTI: also one cuptiGetTimestamp() in InitializeInjection, as the tracer's session start */
#include <stdint.h>
#ifdef CALL_CUPTI
int cuptiGetTimestamp(uint64_t* timestamp);
#endif
#ifdef LINK_CUPTI
int cuptiGetVersion(uint32_t* version);
/* Referenced so that the linker keeps libcupti as a dependency (--no-as-needed would too). */
int (*volatile stepscope_keep_cupti)(uint32_t*) = cuptiGetVersion;
#endif
int InitializeInjection(void) {
#ifdef CALL_CUPTI
  uint64_t t = 0;
  (void)cuptiGetTimestamp(&t);
#endif
  return 1;
}
