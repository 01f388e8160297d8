/*
 * test_vulkan.c — libstrobe_vulkan on a real Vulkan device (lavapipe on the
 * test machines; docs/gpu.md §Vulkan): zones attach to the frame that
 * issued them, the ring is read without ever waiting and never returns a
 * stale result as a new one, a full ring records nothing rather than wait or
 * overwrite (and counts it), every bound counts what it cut, and both
 * calibration methods (VK_EXT_calibrated_timestamps and the forced
 * submit-and-wait fallback) give pairs that bracket the device clock.
 * Must never: skip when no device is found (it fails, naming the package).
 */
#include <time.h>
#include <unistd.h>

#include "strobe/session.h"

/* Under AddressSanitizer: lavapipe leaks one 128-byte block inside its ICD,
 * and the Vulkan loader has unloaded the ICD by the time LeakSanitizer
 * reports, so no suppression could name it. Keeping the ICD mapped
 * (RTLD_NODELETE: the loader's later dlopen gets this same object) lets the
 * report name the driver, and these suppressions do; nothing of Strobe's. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <dlfcn.h>
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libvulkan_lvp.so\nleak:libLLVM\n"; }
__attribute__((constructor)) static void keep_icd_mapped(void) {
  (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);
}
#endif
#endif

#include "support/harness.h"
#include "strobe/gpu.h"
#include "vk_device.h"
#include "vulkan/vulkan_internal.h"

#define MAX_SEEN 256

typedef struct seen {
  strobe__vulkan_zone_result z[MAX_SEEN];
  int n;
} seen;

static void sink(const strobe__vulkan_zone_result *z, void *user) {
  seen *s = user;
  if (s->n < MAX_SEEN) s->z[s->n++] = *z;
}

static strobe_site zone_a = STROBE_GPU_SITE("zone_a");
static strobe_site zone_b = STROBE_GPU_SITE("zone_b");

/* A command buffer and a fence for one submission. */
typedef struct submission {
  VkCommandBuffer cmd;
  VkFence fence;
} submission;

static void submission_open(vk_device *d, submission *s) {
  VkCommandBufferAllocateInfo ca = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  REQUIRE(vkAllocateCommandBuffers(d->device, &ca, &s->cmd) == VK_SUCCESS);
  VkFenceCreateInfo fc = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  REQUIRE(vkCreateFence(d->device, &fc, NULL, &s->fence) == VK_SUCCESS);
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  REQUIRE(vkBeginCommandBuffer(s->cmd, &bi) == VK_SUCCESS);
}

/* Submits; a frame id > 0 gets its submit instant marked immediately before
 * vkQueueSubmit, as docs/gpu.md §The four instants says (lavapipe starts the
 * work before the call returns). */
static void submission_submit_frame(vk_device *d, submission *s, uint64_t frame) {
  REQUIRE(vkEndCommandBuffer(s->cmd) == VK_SUCCESS);
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &s->cmd};
  if (frame) CHECK_EQ_INT(strobe_gpu_frame_mark(frame, STROBE_GPU_SUBMIT, 0), 0);
  REQUIRE(vkQueueSubmit(d->queue, 1, &si, s->fence) == VK_SUCCESS);
}
static void submission_submit(vk_device *d, submission *s) { submission_submit_frame(d, s, 0); }

static void submission_wait(vk_device *d, submission *s) {
  REQUIRE(vkWaitForFences(d->device, 1, &s->fence, VK_TRUE, 10000000000ull) == VK_SUCCESS);
}

static void submission_close(vk_device *d, submission *s) {
  vkDestroyFence(d->device, s->fence, NULL);
  vkFreeCommandBuffers(d->device, d->pool, 1, &s->cmd);
}

/* Makes the GPU wait for the host: the command buffer blocks on `ev` until vkSetEvent. */
static void wait_for_host(VkCommandBuffer cmd, VkEvent ev) {
  vkCmdWaitEvents(cmd, 1, &ev, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, NULL, 0, NULL, 0,
                  NULL);
}

static VkEvent event_create(vk_device *d) {
  VkEventCreateInfo ec = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
  VkEvent ev = VK_NULL_HANDLE;
  REQUIRE(vkCreateEvent(d->device, &ec, NULL, &ev) == VK_SUCCESS);
  return ev;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One frame with two zones, submitted. */
static void frame_two_zones(vk_device *d, strobe_vulkan *vk, submission *s, uint64_t frame, VkEvent block) {
  submission_open(d, s);
  CHECK_EQ_INT(strobe_vulkan_frame_begin(vk, s->cmd, frame), 0);
  if (block) wait_for_host(s->cmd, block);
  strobe_vulkan_zone a = strobe_vulkan_zone_begin(vk, s->cmd, &zone_a, STROBE_GPU_PASS_MAIN);
  strobe_vulkan_zone b = strobe_vulkan_zone_begin(vk, s->cmd, &zone_b, STROBE_GPU_PASS_FILTER_GROUP); /* nested in a */
  strobe_vulkan_zone_end(vk, s->cmd, b);
  strobe_vulkan_zone_end(vk, s->cmd, a);
  CHECK_EQ_INT(strobe_vulkan_frame_end(vk, s->cmd), 2);
  strobe_gpu_frame_mark(frame, STROBE_GPU_CPU_END, 0); /* the command buffer is built */
  submission_submit_frame(d, s, frame);
}

/* A device, a ring on it (slots and zones_per_frame: 0 for the defaults) and a sink that keeps what it reads. */
typedef struct fixture {
  vk_device d;
  strobe_vulkan *vk;
  seen s;
} fixture;

static void fixture_close(void *arg) {
  fixture *f = arg;
  strobe_vulkan_destroy(f->vk);
  vk_device_close(&f->d);
}

static void fixture_open(fixture *f, uint32_t slots, uint32_t zones) {
  memset(f, 0, sizeof *f);
  REQUIRE(vk_device_open(&f->d, 0) == 0);
  strobe_vulkan_desc desc = vk_device_desc(&f->d);
  desc.slots = slots;
  desc.zones_per_frame = zones;
  REQUIRE_EQ_INT(strobe_vulkan_create(&desc, &f->vk), 0);
  strobe__vulkan_set_sink(f->vk, sink, &f->s);
  harness_defer(fixture_close, f);
}

/* Results attach to the frame that issued them, whatever the order and
 * moment of reading: frames 100..105 submitted back to back, read after all
 * ran, each zone under its own frame, in order, nested as recorded. */
static void test_zones_attach_to_issuing_frame(void) {
  static fixture fx;
  fixture_open(&fx, 8, 0);
  vk_device d = fx.d;
  strobe_vulkan *vk = fx.vk;
  seen *s = &fx.s;
  submission sub[6];
  for (int f = 0; f < 6; f++) frame_two_zones(&d, vk, &sub[f], 100 + (uint64_t)f, VK_NULL_HANDLE);
  for (int f = 0; f < 6; f++) submission_wait(&d, &sub[f]);
  CHECK_EQ_INT(strobe_vulkan_collect(vk), 6);
  REQUIRE_EQ_INT(s->n, 12);
  for (int i = 0; i < 12; i++) {
    CHECK_EQ_U64(s->z[i].frame_id, 100 + (uint64_t)i / 2);
    CHECK(s->z[i].site == (i % 2 ? &zone_b : &zone_a));
    CHECK(s->z[i].device_begin <= s->z[i].device_end);
  }
  for (int f = 0; f < 6; f++) { /* b inside a; frame f+1 after frame f */
    CHECK(s->z[2 * f].device_begin <= s->z[2 * f + 1].device_begin);
    CHECK(s->z[2 * f + 1].device_end <= s->z[2 * f].device_end);
    if (f) CHECK(s->z[2 * f - 2].device_end <= s->z[2 * f].device_begin);
  }
  strobe_vulkan_stats st = strobe_vulkan_query_stats(vk);
  CHECK_EQ_U64(st.frames_begun, 6);
  CHECK_EQ_U64(st.frames_resolved, 6);
  CHECK_EQ_U64(st.frames_pending, 0);
  CHECK_EQ_U64(st.zones_recorded, 12);
  /* Its own device memory, for an application's GPU memory by kind: at least the 4 default slots'
   * regions (a sequence word and 64 zones' 2 queries of 2 words, 64-byte aligned). */
  CHECKF(st.memory_bytes >= 4u * ((16u + 64u * 32u + 63u) & ~63u) && st.memory_bytes < (1u << 20),
         "memory_bytes %llu", (unsigned long long)st.memory_bytes);
  CHECK_EQ_INT(strobe_vulkan_collect(vk), 0); /* nothing is read twice */
  CHECK_EQ_INT(s->n, 12);
  for (int f = 0; f < 6; f++) submission_close(&d, &sub[f]);
}

/* collect never waits: a frame the GPU cannot run yet (it waits for a host
 * event) is left pending, collect returns at once with nothing; and when a
 * slot is reused, the previous frame's results still in its queries are
 * never taken for the new frame's. */
static void test_collect_never_waits_nor_reads_stale(void) {
  static fixture fx;
  fixture_open(&fx, 2, 0);
  vk_device d = fx.d;
  strobe_vulkan *vk = fx.vk;
  seen *s = &fx.s;
  submission sub[3];
  frame_two_zones(&d, vk, &sub[0], 1, VK_NULL_HANDLE); /* slot 0 */
  frame_two_zones(&d, vk, &sub[1], 2, VK_NULL_HANDLE); /* slot 1 */
  submission_wait(&d, &sub[0]);
  submission_wait(&d, &sub[1]);
  CHECK_EQ_INT(strobe_vulkan_collect(vk), 2);
  REQUIRE_EQ_INT(s->n, 4);
  VkEvent ev = event_create(&d);
  frame_two_zones(&d, vk, &sub[2], 3, ev); /* slot 0 again: frame 1's results were in its queries */
  double t0 = now_s();
  for (int i = 0; i < 20; i++) CHECK_EQ_INT(strobe_vulkan_collect(vk), 0);
  double spent = now_s() - t0;
  CHECKF(spent < 1.0, "20 collects of a blocked frame took %.3f s: collect waited", spent);
  CHECK_EQ_INT(s->n, 4); /* neither frame 1's stale results nor anything else */
  CHECK(strobe_vulkan_query_stats(vk).collect_not_ready >= 20);
  CHECK_EQ_U64(strobe_vulkan_query_stats(vk).frames_pending, 1);
  CHECK(vkGetFenceStatus(d.device, sub[2].fence) == VK_NOT_READY); /* the GPU really was blocked */
  REQUIRE(vkSetEvent(d.device, ev) == VK_SUCCESS);
  submission_wait(&d, &sub[2]);
  CHECK_EQ_INT(strobe_vulkan_collect(vk), 1);
  REQUIRE_EQ_INT(s->n, 6);
  CHECK_EQ_U64(s->z[4].frame_id, 3);
  CHECK(s->z[4].device_begin > s->z[3].device_end); /* new timestamps, after frame 2's */
  vkDestroyEvent(d.device, ev, NULL);
  for (int f = 0; f < 3; f++) submission_close(&d, &sub[f]);
}

/* A full ring never waits and never overwrites: the frame that finds every
 * slot in flight records nothing (EBUSY, counted, its zones dropped and
 * counted); once the GPU catches up, frames record again. */
static void test_full_ring_records_nothing_and_counts(void) {
  static fixture fx;
  fixture_open(&fx, 2, 0);
  vk_device d = fx.d;
  strobe_vulkan *vk = fx.vk;
  seen *s = &fx.s;
  VkEvent ev = event_create(&d);
  submission sub[4];
  frame_two_zones(&d, vk, &sub[0], 10, ev);
  frame_two_zones(&d, vk, &sub[1], 11, VK_NULL_HANDLE); /* queued behind frame 10 */
  submission_open(&d, &sub[2]);
  double t0 = now_s();
  CHECK_EQ_INT(strobe_vulkan_frame_begin(vk, sub[2].cmd, 12), STROBE_EBUSY);
  strobe_vulkan_zone z = strobe_vulkan_zone_begin(vk, sub[2].cmd, &zone_a, NULL);
  CHECK_EQ_INT(z.index, 0);
  strobe_vulkan_zone_end(vk, sub[2].cmd, z);
  CHECK_EQ_INT(strobe_vulkan_frame_end(vk, sub[2].cmd), 0);
  CHECK(now_s() - t0 < 1.0);
  submission_submit(&d, &sub[2]);
  strobe_vulkan_stats st = strobe_vulkan_query_stats(vk);
  CHECK_EQ_U64(st.frames_unrecorded, 1);
  CHECK_EQ_U64(st.zones_dropped, 1);
  CHECK_EQ_U64(st.zones_misused, 0); /* ending a zone that was not recorded is no misuse */
  REQUIRE(vkSetEvent(d.device, ev) == VK_SUCCESS);
  for (int f = 0; f < 3; f++) submission_wait(&d, &sub[f]);
  frame_two_zones(&d, vk, &sub[3], 13, VK_NULL_HANDLE); /* frame_begin reads the oldest slot itself */
  submission_wait(&d, &sub[3]);
  CHECK_EQ_INT(strobe_vulkan_collect(vk), 2); /* 11 and 13 (10 was read by frame 13's frame_begin) */
  REQUIRE_EQ_INT(s->n, 6);
  CHECK_EQ_U64(s->z[0].frame_id, 10);
  CHECK_EQ_U64(s->z[2].frame_id, 11);
  CHECK_EQ_U64(s->z[4].frame_id, 13);
  vkDestroyEvent(d.device, ev, NULL);
  for (int f = 0; f < 4; f++) submission_close(&d, &sub[f]);
}

/* Bounds count what they cut: zones beyond zones_per_frame are dropped and
 * counted; zones left open are ended by frame_end (counted), so the slot
 * still resolves; a zone ended twice is misuse, counted and ignored. */
static void test_bounds_and_misuse_counted(void) {
  static fixture fx;
  fixture_open(&fx, 0, 3);
  vk_device d = fx.d;
  strobe_vulkan *vk = fx.vk;
  seen *s = &fx.s;
  submission sub;
  submission_open(&d, &sub);
  REQUIRE_EQ_INT(strobe_vulkan_frame_begin(vk, sub.cmd, 7), 0);
  CHECK_EQ_INT(strobe_vulkan_frame_begin(vk, sub.cmd, 8), STROBE_ESTATE);
  strobe_vulkan_zone z[5];
  for (int i = 0; i < 5; i++) z[i] = strobe_vulkan_zone_begin(vk, sub.cmd, &zone_a, NULL);
  CHECK(z[2].index != 0);
  CHECK_EQ_INT(z[3].index, 0);
  CHECK_EQ_INT(z[4].index, 0);
  strobe_vulkan_zone_end(vk, sub.cmd, z[0]);
  strobe_vulkan_zone_end(vk, sub.cmd, z[0]); /* twice */
  CHECK_EQ_INT(strobe_vulkan_frame_end(vk, sub.cmd), 3); /* z[1], z[2] still open */
  CHECK_EQ_INT(strobe_vulkan_frame_end(vk, sub.cmd), STROBE_ESTATE);
  submission_submit(&d, &sub);
  submission_wait(&d, &sub);
  CHECK_EQ_INT(strobe_vulkan_collect(vk), 1);
  CHECK_EQ_INT(s->n, 3);
  strobe_vulkan_stats st = strobe_vulkan_query_stats(vk);
  CHECK_EQ_U64(st.zones_dropped, 2);
  CHECK_EQ_U64(st.zones_unclosed, 2);
  CHECK_EQ_U64(st.zones_misused, 1);
  CHECK_EQ_U64(st.zones_recorded, 3);
  submission_close(&d, &sub);
}

/* Bad input: a clear error and nothing created. */
static void test_bad_desc_rejected(void) {
  vk_device d;
  REQUIRE(vk_device_open(&d, 0) == 0); /* calibrated timestamps not enabled */
  strobe_vulkan *vk = (strobe_vulkan *)&d;
  strobe_vulkan_desc desc = vk_device_desc(&d);
  CHECK_EQ_INT(strobe_vulkan_create(NULL, &vk), STROBE_EINVAL);
  CHECK(vk == NULL);
  desc.device = VK_NULL_HANDLE;
  CHECK_EQ_INT(strobe_vulkan_create(&desc, &vk), STROBE_EINVAL);
  desc = vk_device_desc(&d);
  desc.slots = 1;
  CHECK_EQ_INT(strobe_vulkan_create(&desc, &vk), STROBE_EINVAL);
  desc.slots = STROBE_VULKAN_MAX_SLOTS + 1;
  CHECK_EQ_INT(strobe_vulkan_create(&desc, &vk), STROBE_EINVAL);
  desc = vk_device_desc(&d);
  desc.zones_per_frame = STROBE_VULKAN_MAX_ZONES + 1;
  CHECK_EQ_INT(strobe_vulkan_create(&desc, &vk), STROBE_EINVAL);
  desc = vk_device_desc(&d);
  desc.queue_family = 99;
  CHECK_EQ_INT(strobe_vulkan_create(&desc, &vk), STROBE_EINVAL);
  /* The calibrated method on a device that did not enable the extension. */
  desc = vk_device_desc(&d);
  desc.calibration = STROBE_VULKAN_CALIBRATION_EXT;
  CHECK_EQ_INT(strobe_vulkan_create(&desc, &vk), STROBE_EINVAL);
  CHECK(vk == NULL);
  desc.calibration = STROBE_VULKAN_CALIBRATION_AUTO; /* falls back to submit-and-wait */
  REQUIRE_EQ_INT(strobe_vulkan_create(&desc, &vk), 0);
  CHECK_EQ_INT(strobe_vulkan_query_desc(vk).calibration, STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT);
  CHECK_EQ_INT(strobe_vulkan_frame_end(vk, VK_NULL_HANDLE), STROBE_ESTATE);
  CHECK_EQ_INT(strobe_vulkan_frame_begin(vk, VK_NULL_HANDLE, 1), STROBE_EINVAL);
  strobe_vulkan_destroy(vk);
  strobe_vulkan_destroy(NULL);
  vk_device_close(&d);
}

/* The zones reach gpu.h as spans of the frame that issued them, the pairs
 * feed the object's clock domain, and with the application's three marks a
 * frame's four instants come in order on lavapipe: cpu_end <= submit <= GPU
 * start <= GPU end <= fence seen, within the calibration bound. */
static void test_spans_and_instants_on_the_timeline(void) {
  strobe_collector *c;
  char id[STROBE_SESSION_ID_MAX];
  REQUIRE_EQ_INT(strobe_collector_create(&c), 0);
  REQUIRE_EQ_INT(strobe_session_start(c, NULL, id), 0); /* the live frame table fills while a session is open */
  static fixture fx;
  fixture_open(&fx, 0, 0);
  vk_device d = fx.d;
  strobe_vulkan *vk = fx.vk;
  strobe_clock_domain dom = strobe_vulkan_query_domain(vk);
  CHECK(dom.id != 0 && strobe_vulkan_query_queue(vk).id != 0);
  strobe_clock_domain_stats cs;
  REQUIRE_EQ_INT(strobe_clock_domain_query_stats(dom, &cs), 0);
  uint64_t pairs0 = cs.pairs;
  REQUIRE_EQ_INT(strobe_vulkan_calibrate(vk, NULL), 0);
  strobe_gpu_stats g0 = strobe_gpu_query_stats();
  /* Forty rounds of three frames in flight: lavapipe often starts a frame
   * before vkQueueSubmit returns, so a submit marked after the call would
   * show as a violation in some of the 120 (1 frame in 6 did in the demo). */
  enum { ROUNDS = 40 };
  for (int round = 0; round < ROUNDS; round++) {
  submission sub[3];
  for (int f = 0; f < 3; f++) {
    uint64_t frame = 500 + 3 * (uint64_t)round + (uint64_t)f;
    frame_two_zones(&d, vk, &sub[f], frame, VK_NULL_HANDLE); /* submit marked just before vkQueueSubmit */
  }
  REQUIRE_EQ_INT(strobe_vulkan_calibrate(vk, NULL), 0);
  for (int f = 0; f < 3; f++) {
    uint64_t frame = 500 + 3 * (uint64_t)round + (uint64_t)f;
    while (vkGetFenceStatus(d.device, sub[f].fence) != VK_SUCCESS) usleep(100); /* polled, as a sender does */
    uint64_t seen_at = strobe_clock_now();
    strobe_vulkan_collect(vk);
    CHECK_EQ_INT(strobe_gpu_frame_mark(frame, STROBE_GPU_FENCE_SEEN, seen_at), 0);
    strobe_gpu_frame gf;
    REQUIRE_EQ_INT(strobe_gpu_query_frame(frame, &gf), 0);
    CHECK_EQ_INT(gf.spans, 2);
    CHECK_EQ_INT(gf.late_spans, 0);
    CHECK(gf.closed);
    CHECKF(gf.violations == 0, "frame %llu: ordering violations 0x%x (submit %llu, gpu %llu..%llu, seen %llu, bound %.0f ns)",
           (unsigned long long)frame, gf.violations, (unsigned long long)gf.submit, (unsigned long long)gf.gpu_begin,
           (unsigned long long)gf.gpu_end, (unsigned long long)gf.fence_seen, gf.bound_ns);
    CHECK(gf.gpu_begin != 0 && gf.gpu_begin <= gf.gpu_end);
    CHECK(gf.backlog_ns == gf.backlog_ns && gf.polling_ns == gf.polling_ns); /* both known: not NaN */
  }
  for (int f = 0; f < 3; f++) submission_close(&d, &sub[f]);
  }
  strobe_gpu_stats g1 = strobe_gpu_query_stats();
  CHECK_EQ_U64(g1.spans - g0.spans, 6 * ROUNDS);
  CHECK_EQ_U64(g1.violations - g0.violations, 0);
  CHECK_EQ_U64(strobe_vulkan_query_stats(vk).spans_refused, 0);
  REQUIRE_EQ_INT(strobe_clock_domain_query_stats(dom, &cs), 0);
  CHECK_EQ_U64(cs.pairs - pairs0, 1 + ROUNDS);
  strobe_report *r = NULL;
  CHECK_EQ_INT(strobe_session_stop(c, id, 0, &r), 0);
  strobe_report_free(r);
  strobe_collector_close(c);
  strobe_collector_release(c);
}

/* >>calibration: device ns of a pair, and host ns of a host tick. */
static double dev_ns(const strobe_vulkan *vk, uint64_t ticks) {
  return (double)ticks * strobe_vulkan_query_stats(vk).ns_per_device_tick;
}
static double host_ns(uint64_t ticks) { return strobe_clock_ticks_to_ns(ticks); }

/* The device advanced, between two pairs, by what the host advanced: within
 * the two brackets, plus the tick-rate calibration's error (1e-4). */
static void check_advance(const strobe_vulkan *vk, strobe_vulkan_pair p1, strobe_vulkan_pair p2) {
  double dd = dev_ns(vk, p2.device_ticks - p1.device_ticks);
  double lo = host_ns(p2.host_before - p1.host_after), hi = host_ns(p2.host_after - p1.host_before);
  double slack = 2000.0 + 1e-4 * hi;
  CHECKF(dd >= lo - slack && dd <= hi + slack, "device advanced %.0f ns, host between %.0f and %.0f ns", dd, lo, hi);
}

/* VK_EXT_calibrated_timestamps: the method in force on a device that has it,
 * narrow pairs (the call's own width), and the device clock advancing with
 * the host's. */
static void test_calibration_ext(void) {
  vk_device d;
  REQUIRE(vk_device_open(&d, 1) == 0);
  REQUIREF(d.calibrated, "%s does not offer VK_EXT_calibrated_timestamps (lavapipe does)", d.name);
  strobe_vulkan *vk;
  strobe_vulkan_desc desc = vk_device_desc(&d);
  REQUIRE_EQ_INT(strobe_vulkan_create(&desc, &vk), 0);
  CHECK_EQ_INT(strobe_vulkan_query_desc(vk).calibration, STROBE_VULKAN_CALIBRATION_EXT);
  strobe_vulkan_pair p1, p2;
  REQUIRE_EQ_INT(strobe_vulkan_calibrate(vk, &p1), 0);
  usleep(30000);
  REQUIRE_EQ_INT(strobe_vulkan_calibrate(vk, &p2), 0);
  CHECK_EQ_INT(p1.method, STROBE_VULKAN_CALIBRATION_EXT);
  CHECK(p1.host_before <= p1.host_after);
  CHECK(p2.device_ticks > p1.device_ticks);
  check_advance(vk, p1, p2);
  strobe_vulkan_stats st = strobe_vulkan_query_stats(vk);
  CHECK_EQ_U64(st.calibrations, 2);
  CHECKF(st.last_pair_width_ns < 100000, "a calibrated pair %llu ns wide", (unsigned long long)st.last_pair_width_ns);
  strobe_vulkan_destroy(vk);
  vk_device_close(&d);
}

/* The submit-and-wait fallback, forced on a device that has the extension,
 * so both methods meet on one device clock: the fallback's device tick,
 * mapped through a line fitted on calibrated pairs taken just before and
 * after, falls inside the fallback's own host bracket. */
static void test_calibration_submit_wait_fallback(void) {
  vk_device d;
  REQUIRE(vk_device_open(&d, 1) == 0);
  REQUIRE(d.calibrated);
  strobe_vulkan *ext, *sw;
  strobe_vulkan_desc desc = vk_device_desc(&d);
  REQUIRE_EQ_INT(strobe_vulkan_create(&desc, &ext), 0);
  desc.calibration = STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT;
  REQUIRE_EQ_INT(strobe_vulkan_create(&desc, &sw), 0);
  CHECK_EQ_INT(strobe_vulkan_query_desc(sw).calibration, STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT);
  for (int round = 0; round < 3; round++) {
    strobe_vulkan_pair e1, s, e2;
    REQUIRE_EQ_INT(strobe_vulkan_calibrate(ext, &e1), 0);
    REQUIRE_EQ_INT(strobe_vulkan_calibrate(sw, &s), 0);
    REQUIRE_EQ_INT(strobe_vulkan_calibrate(ext, &e2), 0);
    CHECK_EQ_INT(s.method, STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT);
    CHECK(s.host_before < s.host_after);
    check_advance(sw, s, e2);
    /* Host ns at the device tick, from the line through e1 and e2 (their midpoints). */
    double h1 = host_ns(e1.host_before / 2 + e1.host_after / 2), h2 = host_ns(e2.host_before / 2 + e2.host_after / 2);
    double d1 = dev_ns(ext, e1.device_ticks), d2 = dev_ns(ext, e2.device_ticks), ds = dev_ns(ext, s.device_ticks);
    double at = h1 + (ds - d1) * (h2 - h1) / (d2 - d1);
    double fit_err = host_ns(e1.host_after - e1.host_before) + host_ns(e2.host_after - e2.host_before) + 1000.0;
    CHECKF(at >= host_ns(s.host_before) - fit_err && at <= host_ns(s.host_after) + fit_err,
           "round %d: the fallback's device tick maps to %.0f ns, outside its bracket [%.0f, %.0f] ns (fit +-%.0f)",
           round, at, host_ns(s.host_before), host_ns(s.host_after), fit_err);
  }
  CHECK(strobe_vulkan_query_stats(sw).last_pair_width_ns > 0);
  strobe_vulkan_destroy(sw);
  strobe_vulkan_destroy(ext);
  vk_device_close(&d);
}

/* The forced fallback on a device without the extension enabled. */
static void test_calibration_without_extension(void) {
  vk_device d;
  REQUIRE(vk_device_open(&d, 0) == 0);
  strobe_vulkan *vk;
  strobe_vulkan_desc desc = vk_device_desc(&d);
  REQUIRE_EQ_INT(strobe_vulkan_create(&desc, &vk), 0);
  strobe_vulkan_pair p1, p2;
  REQUIRE_EQ_INT(strobe_vulkan_calibrate(vk, &p1), 0);
  usleep(20000);
  REQUIRE_EQ_INT(strobe_vulkan_calibrate(vk, &p2), 0);
  CHECK_EQ_INT(p1.method, STROBE_VULKAN_CALIBRATION_SUBMIT_WAIT);
  check_advance(vk, p1, p2);
  strobe_vulkan_destroy(vk);
  vk_device_close(&d);
}

#define CASES(X)                                                                                            \
  X(zones_attach_to_issuing_frame) X(collect_never_waits_nor_reads_stale) X(full_ring_records_nothing_and_counts) \
  X(bounds_and_misuse_counted) X(bad_desc_rejected) X(calibration_ext) X(calibration_submit_wait_fallback)        \
  X(calibration_without_extension) X(spans_and_instants_on_the_timeline)
HARNESS_MAIN(CASES)
