/*
 * host_linux.c — host.h's per-OS part on Linux: getpid and gettid, the
 * kernel's boot id (/proc/sys/kernel/random/boot_id, a UUID that changes at
 * every boot, and with it CLOCK_MONOTONIC's origin), getrandom, uname's
 * machine and the page size. host_common.c holds the rest.
 *
 * Must never: fall back to a predictable source for a random identifier.
 */
#include "platform/host.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "strobe/strobe.h"

uint32_t strobe__host_pid(void) { return (uint32_t)getpid(); }

uint64_t strobe__host_tid(void) { return (uint64_t)syscall(SYS_gettid); }

int strobe__host_os_boot_id(uint8_t out[16]) {
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[64];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  return n > 0 ? strobe__host_hex16(text, (size_t)n, out) : -1;
}

int strobe__host_random_u64(uint64_t *out) {
  uint64_t v = 0;
  do {
    uint8_t *p = (uint8_t *)&v;
    size_t left = sizeof v;
    while (left) {
      ssize_t k = getrandom(p, left, 0);
      if (k < 0) {
        if (errno == EINTR) continue;
        return STROBE_EIO;
      }
      p += k;
      left -= (size_t)k;
    }
  } while (v == 0);
  *out = v;
  return 0;
}

static char g_machine[65] = "unknown";
static pthread_once_t g_machine_once = PTHREAD_ONCE_INIT;

static void read_machine(void) {
  struct utsname u;
  if (uname(&u) == 0) {
    strncpy(g_machine, u.machine, sizeof g_machine - 1);
    g_machine[sizeof g_machine - 1] = 0;
  }
}

const char *strobe__host_machine(void) {
  pthread_once(&g_machine_once, read_machine);
  return g_machine;
}

int strobe__host_crash_signals(void) { return 1; }

const char *strobe__host_os(void) { return "linux"; }

size_t strobe__host_page_size(void) {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? (size_t)page : 4096u;
}
