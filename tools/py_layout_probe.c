// Prints the offsets in capture/pystack/py_layout.cc from the CPython headers:
//   gcc -I$P/include/python3.X -I$P/include/python3.X/internal tools/py_layout_probe.c && ./a.out
// (P: a CPython 3.11-3.13 install prefix with its internal headers).
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_gil.h"
#include <stdio.h>
#define P(name, expr) printf("%-28s %zu\n", name, (size_t)(expr))
int main(void) {
  P("runtime.interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
  P("interp.next", offsetof(PyInterpreterState, next));
  P("interp.threads_head", offsetof(PyInterpreterState, threads.head));
#if PY_VERSION_HEX >= 0x030C0000
  P("interp.gil_ptr", offsetof(PyInterpreterState, ceval.gil));
#else
  P("runtime.gil", offsetof(_PyRuntimeState, ceval.gil));
#endif
  P("sizeof gil", sizeof(struct _gil_runtime_state));
  P("tstate.next", offsetof(PyThreadState, next));
  P("tstate.native_thread_id", offsetof(PyThreadState, native_thread_id));
#if PY_VERSION_HEX >= 0x030D0000
  P("tstate.current_frame", offsetof(PyThreadState, current_frame));
  P("frame.f_executable", offsetof(_PyInterpreterFrame, f_executable));
  P("frame.instr_ptr", offsetof(_PyInterpreterFrame, instr_ptr));
#else
  P("tstate.cframe", offsetof(PyThreadState, cframe));
  P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
  P("frame.f_code", offsetof(_PyInterpreterFrame, f_code));
  P("frame.prev_instr", offsetof(_PyInterpreterFrame, prev_instr));
#endif
  P("frame.previous", offsetof(_PyInterpreterFrame, previous));
  P("frame.owner", offsetof(_PyInterpreterFrame, owner));
  P("code.co_filename", offsetof(PyCodeObject, co_filename));
  P("code.co_name", offsetof(PyCodeObject, co_name));
  P("code.co_qualname", offsetof(PyCodeObject, co_qualname));
  P("code.co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
  P("code.co_linetable", offsetof(PyCodeObject, co_linetable));
  P("code.co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
  P("sizeof PyASCIIObject", sizeof(PyASCIIObject));
  P("sizeof PyCompactUnicodeObject", sizeof(PyCompactUnicodeObject));
  P("unicode.state", offsetof(PyASCIIObject, state));
  P("unicode.length", offsetof(PyASCIIObject, length));
  P("bytes.ob_size", offsetof(PyVarObject, ob_size));
  P("bytes.ob_sval", offsetof(PyBytesObject, ob_sval));
  P("gil.mutex", offsetof(struct _gil_runtime_state, mutex));
  P("gil.cond", offsetof(struct _gil_runtime_state, cond));
  P("gil.locked", offsetof(struct _gil_runtime_state, locked));
  return 0;
}
