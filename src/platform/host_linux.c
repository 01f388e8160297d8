/*
 * host_linux.c — host.h on Linux: getpid, the kernel's boot id
 * (/proc/sys/kernel/random/boot_id, a UUID that changes at every boot, and
 * with it CLOCK_MONOTONIC's origin) and getrandom.
 */
#include "platform/host.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "strobe/strobe.h"

uint32_t strobe__host_pid(void) { return (uint32_t)getpid(); }

static uint8_t g_boot[16];
static int g_boot_rc = STROBE_EIO;
static pthread_once_t g_boot_once = PTHREAD_ONCE_INIT;

static int hex_nibble(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static void read_boot_id(void) {
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char text[64];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return;
  uint8_t id[16];
  int nib = 0;
  for (ssize_t i = 0; i < n && nib < 32; i++) {
    if (text[i] == '-' || text[i] == '\n') continue;
    int v = hex_nibble(text[i]);
    if (v < 0) return;
    if (nib % 2 == 0)
      id[nib / 2] = (uint8_t)(v << 4);
    else
      id[nib / 2] |= (uint8_t)v;
    nib++;
  }
  if (nib != 32) return;
  memcpy(g_boot, id, sizeof g_boot);
  g_boot_rc = 0;
}

int strobe__host_boot_id(uint8_t out[16]) {
  pthread_once(&g_boot_once, read_boot_id);
  if (g_boot_rc) {
    memset(out, 0, 16);
    return g_boot_rc;
  }
  memcpy(out, g_boot, 16);
  return 0;
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
