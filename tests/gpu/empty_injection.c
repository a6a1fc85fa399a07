/* A CUDA injection library that does nothing: CUDA_INJECTION64_PATH set to it measures what the
   driver's injection mode alone costs a program (issue 33; tests/gpu/tracer_arms_batch.sh, arm
   empty_env). Build: cc -shared -fPIC -O2 -o libempty_injection.so empty_injection.c */
int InitializeInjection(void) { return 1; }
