/*
 * own_recorder.c — a program that links Strobe and starts its own recorder
 * (record_test.py, case double_start): under `strobe record` the preloaded
 * libstrobe.so must be its own one library (exit 4 if two are loaded), its
 * own strobe_setup must still be accepted (exit 7), its recorder must start
 * and stop as without the starter, and each capture
 * must hold its N hand-placed scopes once.
 * Usage: own_recorder OWN_CAPTURE N
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strobe/record.h"

#if defined(OWN_STATIC)
#define OWN_COPIES_LINKED_IN 1 /* record_own_static: Strobe linked in, beside the preloaded libstrobe.so */
#else
#define OWN_COPIES_LINKED_IN 0
#endif
#include "strobe/strobe.h"

static int count_strobe(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  const char *base = strrchr(info->dlpi_name, '/');
  if (base && !strncmp(base + 1, "libstrobe.so", 12)) ++*(int *)arg;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int copies = 0;
  dl_iterate_phdr(count_strobe, &copies);
#if defined(OWN_STATIC)
  copies++; /* the copy linked in */
#endif
  if (copies != 1 + (OWN_COPIES_LINKED_IN)) {
    fprintf(stderr, "own_recorder: %d copies of libstrobe.so loaded\n", copies);
    return 4;
  }
  /* Its own configuration first, as a program that links Strobe may: the
   * starter must have left it open (exit 7 if not). */
  strobe_desc d = strobe_query_desc();
  d.ring_events = 1u << 16;
  int rc = strobe_setup(&d);
  if (rc) {
    fprintf(stderr, "own_recorder: strobe_setup: %s\n", strobe_strerror(rc));
    return 7;
  }
  strobe_recorder *r = NULL;
  rc = strobe_record_start(&(strobe_record_desc){.path = argv[1]}, &r);
  if (rc) {
    fprintf(stderr, "own_recorder: strobe_record_start: %s\n", strobe_strerror(rc));
    return 5;
  }
  int n = atoi(argv[2]);
  volatile int sink = 0;
  for (int i = 0; i < n; i++) {
    STROBE_SCOPE("own_work");
    sink += i;
  }
  (void)sink; /* read once: Clang counts a volatile only stored to as unused */
  rc = strobe_record_stop(r);
  return rc ? 6 : 0;
}
