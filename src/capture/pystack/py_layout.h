// Where CPython keeps what a stack reader needs: offsets into its internal
// structures (_PyRuntimeState, PyInterpreterState, PyThreadState,
// _PyInterpreterFrame, PyCodeObject, str/bytes objects), one table per
// supported minor version: 3.11, 3.12, 3.13 (default builds; not the
// free-threaded or debug builds).
//
// The numbers are facts about CPython's documented struct layouts
// (Include/internal/pycore_runtime.h, pycore_interp.h, pycore_frame.h,
// Include/cpython/pystate.h, code.h, unicodeobject.h at v3.11.7, v3.12.1,
// v3.13.0 on x86-64/aarch64 LP64), checked with offsetof against those
// headers by tools/py_layout_probe.c; the location-table format is
// CPython's Objects/locations.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stepscope::pystack {

struct PyLayout {
  int minor;  // 11, 12, 13
  uint32_t runtime_interpreters_head;
  uint32_t interp_next;
  uint32_t interp_threads_head;
  int32_t runtime_gil;     // 3.11: the GIL state inside _PyRuntime; -1 otherwise
  int32_t interp_gil_ptr;  // 3.12+: pointer to the GIL state in the interpreter; -1
  uint32_t gil_size;       // sizeof(struct _gil_runtime_state)
  uint32_t tstate_next;
  uint32_t tstate_native_thread_id;
  int32_t tstate_cframe;  // 3.11/3.12: tstate->cframe; -1 in 3.13
  uint32_t cframe_current_frame;
  int32_t tstate_current_frame;  // 3.13: tstate->current_frame; -1 before
  uint32_t frame_code;           // f_code (f_executable in 3.13)
  uint32_t frame_previous;
  uint32_t frame_instr;  // prev_instr (instr_ptr in 3.13)
  uint32_t frame_owner;
  int32_t owner_cstack;  // FRAME_OWNED_BY_CSTACK (a shim frame); -1 in 3.11
  uint32_t code_filename;
  uint32_t code_name;
  uint32_t code_qualname;
  uint32_t code_firstlineno;
  uint32_t code_linetable;
  uint32_t code_adaptive;  // co_code_adaptive: the first instruction
  uint32_t ascii_size;     // sizeof(PyASCIIObject): compact ASCII data follows
  uint32_t compact_size;   // sizeof(PyCompactUnicodeObject): other compact data
  uint32_t unicode_length;
  uint32_t unicode_state;
  uint32_t bytes_size;     // ob_size of a bytes object
  uint32_t bytes_data;     // ob_sval
  int32_t interp_own_gil;  // 3.12+: the interpreter's own GIL state (_gil), where the main
                           // interpreter's gil pointer points; -1 in 3.11
};

// The layout for PY_VERSION_HEX `hexversion` (Py_Version), or nullptr when
// the version is not supported.
const PyLayout* LayoutFor(uint32_t hexversion);

// CPython 3.11+ location table (co_linetable, Objects/locations.md): the
// line of the instruction at code unit `index`, starting from `firstlineno`.
// -1 when the index is past the table or the entry has no location.
int LineForInstruction(const uint8_t* table, size_t size, int firstlineno, int index);

// The same table decoded once into runs of code units on one line, so that
// a code object met in many stacks costs a binary search per frame, not a
// decode from the table's start: `end` is the run's last code unit + 1 (a
// run starts where the previous one ends, the first at 0), `line` -1 where
// there is no location. LineInSpans gives what LineForInstruction gives.
struct LineSpan {
  int32_t end;
  int32_t line;
};
void DecodeLineTable(const uint8_t* table, size_t size, int firstlineno,
                     std::vector<LineSpan>* out);
int LineInSpans(const std::vector<LineSpan>& spans, int index);

}  // namespace stepscope::pystack
