// Stand-in for CANN's closed CPU-debug `simt_stub.h`: simt_api/device_types.h includes it in every
// CPU-debug build; nothing of it is used on A2 (__NPU_ARCH__ 2201 has no SIMT API), so it is empty.
