/*
 * test_windows.c — what the Windows port promises beyond the captures
 * compare_reports.py checks (docs/platforms.md §Windows), run under wine64
 * in the Windows cross pass only (tests/cross/CMakeLists.txt): the host
 * facts come from the OS (process and thread ids, the processor, a boot id
 * that stays the same within the boot, random ids that are never 0 and
 * differ), a capture file's bytes are written binary (a 0x0A byte in a
 * value stays one byte), and each part that is not ported says so with
 * STROBE_EUNSUPPORTED, nothing half-done: the crash handler, the sampler,
 * call tracing, journal recovery, and the journal (a capture records
 * without one, and its header says why).
 */
#include <process.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "platform/host.h"
#include "strobe/capture.h"
#include "strobe/record.h"
#include "strobe/sample.h"
#include "strobe/strobe.h"
#include "strobe/trace.h"
#include "support/harness.h"

static void test_host_facts(void) {
  CHECK_EQ_U64(strobe__host_pid(), GetCurrentProcessId());
  CHECK_EQ_U64(strobe__host_tid(), GetCurrentThreadId());
  CHECK_STR_EQ(strobe__host_os(), "windows");
  CHECK_STR_EQ(strobe__host_machine(), "x86_64");
  CHECK(strobe__host_page_size() >= 4096);
  CHECK_EQ_INT(strobe__host_crash_signals(), 0);
  uint8_t a[16], b[16], zero[16] = {0};
  REQUIRE_EQ_INT(strobe__host_os_boot_id(a), 0);
  REQUIRE_EQ_INT(strobe__host_os_boot_id(b), 0);
  CHECK(memcmp(a, b, 16) == 0);    /* one boot, one id */
  CHECK(memcmp(a, zero, 16) != 0); /* a boot time was read */
  char hex[33];
  CHECK_EQ_INT(strobe__host_boot_hex(hex), 0);
  CHECK_EQ_INT((long long)strlen(hex), 32);
  uint64_t r1 = 0, r2 = 0;
  REQUIRE_EQ_INT(strobe__host_random_u64(&r1), 0);
  REQUIRE_EQ_INT(strobe__host_random_u64(&r2), 0);
  CHECK(r1 != 0 && r2 != 0 && r1 != r2);
}

static void test_absent_parts_say_so(void) {
  strobe_desc d = strobe_query_desc();
  d.crash_handler = 1;
  CHECK_EQ_INT(strobe_setup(&d), STROBE_EUNSUPPORTED);
  CHECK_EQ_INT(strobe_query_desc().crash_handler, 0); /* nothing changed */
  CHECK_EQ_INT(strobe_sampler_start(NULL), STROBE_EUNSUPPORTED);
  strobe_sampler_status st = strobe_sampler_query_status();
  CHECK_EQ_INT(st.running, 0);
  CHECK_EQ_INT(st.error, STROBE_EUNSUPPORTED);
  CHECK(st.reason && st.reason[0]);
  CHECK_EQ_INT(strobe_trace_calls_begin(), STROBE_EUNSUPPORTED);
  CHECK_EQ_INT(strobe_trace_setup(NULL), STROBE_EUNSUPPORTED);
  CHECK_EQ_INT(strobe_capture_recover("a.strobe", "b.strobe", NULL), STROBE_EUNSUPPORTED);
  CHECK(strstr(strobe_strerror(STROBE_EUNSUPPORTED), "platform") != NULL);
}

/* A capture (whose varints hold 0x0A bytes: ten scopes, ten values) reads
 * back whole, its header naming Windows and the journal it could not keep. */
static void test_capture_binary_and_journal_off(void) {
  char path[MAX_PATH];
  snprintf(path, sizeof path, "test_windows_%lu.strobe", (unsigned long)GetCurrentProcessId());
  strobe_recorder *rec;
  REQUIRE_EQ_INT(strobe_record_start(&(strobe_record_desc){.path = path}, &rec), 0);
  for (int i = 0; i < 10; i++) {
    STROBE_SCOPE("lf");
    STROBE_VALUE("ten", 10.0);
  }
  REQUIRE_EQ_INT(strobe_record_stop(rec), 0);
  strobe_capture *c;
  REQUIRE_EQ_INT(strobe_capture_open(path, &c), 0);
  const strobe_capture_header *h = strobe_capture_query_header(c);
  CHECK_STR_EQ(h->os, "windows");
  CHECKF(strncmp(h->journal, "off: ", 5) == 0 && strstr(h->journal, "platform"), "journal: %s", h->journal);
  strobe_capture_close(c);
  remove(path);
}

#define CASES(X) X(host_facts) X(absent_parts_say_so) X(capture_binary_and_journal_off)
HARNESS_MAIN(CASES)
