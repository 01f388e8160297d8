/*
 * host_windows.c — host.h's per-OS part on Windows: GetCurrentProcessId and
 * GetCurrentThreadId, BCryptGenRandom (the system CSPRNG), the processor
 * from GetNativeSystemInfo in Linux's vocabulary (x86_64), the page size,
 * and a boot identity: the system's boot time as NtQuerySystemInformation
 * (SystemTimeOfDayInformation) states it, fixed for the whole boot (the
 * origin of QueryPerformanceCounter, under CLOCK_MONOTONIC here), hashed
 * with the computer's name so two hosts booted in the same 100 ns tick
 * still differ. host_common.c holds the rest.
 *
 * Must never: fall back to a predictable source for a random identifier, or
 * call two boots one (the boot time changes with every boot).
 */
#include "platform/host.h"

#include <string.h>
#include <windows.h>
#include <bcrypt.h>
#include <winternl.h>

#include "platform/mix.h"
#include "strobe/strobe.h"

uint32_t strobe__host_pid(void) { return (uint32_t)GetCurrentProcessId(); }

uint64_t strobe__host_tid(void) { return (uint64_t)GetCurrentThreadId(); }

/* SystemTimeOfDayInformation's layout (information class 3), which
 * winternl.h does not declare: times in 100 ns units since 1601. */
typedef struct {
  LARGE_INTEGER boot_time;
  LARGE_INTEGER current_time;
  LARGE_INTEGER time_zone_bias;
  ULONG time_zone_id;
  ULONG reserved;
  ULONGLONG boot_time_bias;
  ULONGLONG sleep_time_bias;
} time_of_day_info;

int strobe__host_os_boot_id(uint8_t out[16]) {
  time_of_day_info t;
  ULONG got = 0;
  memset(&t, 0, sizeof t);
  if (NtQuerySystemInformation((SYSTEM_INFORMATION_CLASS)3, &t, sizeof t, &got) != 0 || got < 8 ||
      t.boot_time.QuadPart == 0)
    return -1;
  char name[MAX_COMPUTERNAME_LENGTH + 1] = {0};
  DWORD len = sizeof name;
  if (!GetComputerNameA(name, &len)) len = 0;
  uint64_t h = 0;
  for (DWORD i = 0; i < len; i++) h = strobe__mix64(h, (uint8_t)name[i]);
  uint64_t boot = (uint64_t)t.boot_time.QuadPart;
  memcpy(out, &boot, 8);
  memcpy(out + 8, &h, 8);
  return 0;
}

int strobe__host_random_u64(uint64_t *out) {
  uint64_t v = 0;
  do {
    if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, (PUCHAR)&v, sizeof v, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
      return STROBE_EIO;
  } while (v == 0);
  *out = v;
  return 0;
}

const char *strobe__host_machine(void) {
  SYSTEM_INFO si;
  GetNativeSystemInfo(&si);
  switch (si.wProcessorArchitecture) {
  case PROCESSOR_ARCHITECTURE_AMD64: return "x86_64";
  case PROCESSOR_ARCHITECTURE_ARM64: return "aarch64";
  default: return "unknown";
  }
}

int strobe__host_crash_signals(void) { return 0; }

const char *strobe__host_os(void) { return "windows"; }

size_t strobe__host_page_size(void) {
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwPageSize ? (size_t)si.dwPageSize : 4096u;
}
