// Stand-in for CANN's closed CPU-debug `stub_fun.h` (tikicpulib): the CPU-debug model's buffer and
// queue bookkeeping that the devkit's TPipe/TQue implementation calls (see stub_def.h).
#ifndef PYPTO_STANDIN_STUB_FUN_H
#define PYPTO_STANDIN_STUB_FUN_H
#include "stub_def.h"

PYPTO_CCE(AscendCBufAbsAddr) PYPTO_CCE(AscendCBufAlloc) PYPTO_CCE(AscendCBufDeque) PYPTO_CCE(AscendCBufEnque)
PYPTO_CCE(AscendCBufFree) PYPTO_CCE(AscendCBufGet) PYPTO_CCE(AscendCBufInit) PYPTO_CCE(AscendCQueCreate)
PYPTO_CCE(AscendCRecordPoolHierarchy) PYPTO_CCE(AscendCTBufPoolInit) PYPTO_CCE(AscendCTBufPoolResetCheck)
PYPTO_CCE(AscendCUpdateTbufPoolStatus) PYPTO_CCE(__ib_set_stub) PYPTO_CCE(__ib_wait_stub)
PYPTO_CCE(__sync_all_stub)

#endif
