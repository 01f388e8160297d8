/*
 * fuzz_capture_reader.c — libFuzzer target for the capture reader: any bytes
 * go through strobe_capture_open_memory and every query of
 * include/strobe/capture.h. It must never crash, hang or leak; what it
 * returns is checked only for the invariants the header promises (a final
 * code that is sticky, lookups that agree with the limits).
 *
 * Mutated blocks nearly always fail their CRC, which would keep the fuzzer
 * out of the decoders. So each input is read as is (which fuzzes the CRC
 * check itself) and, when that changes anything, again with every block's
 * CRC recomputed. Inputs are plain capture files, so the seeds are too
 * (ok-v4-tree.strb: element attributions and a UI-tree snapshot, made by
 * tests/cli/make_capture --ui-tree --frames 6; ok-v4-deep.strb: attachments
 * stored, stored earlier and cut, and a deep capture, made by make_capture
 * --deep --frames 10; ok-v4-merge.strb: a merged capture, its MERGE block and
 * an ORIGIN block before each input's snapshot, attachments and deep capture,
 * made by `strobe merge --same-host` of make_capture --ui-tree --deep
 * --frames 6 with --pid 101 and with --pid 202; ok-v4-recovered.strb: a
 * capture whose process was killed, its JOURNAL_POS blocks, and the events
 * and RECOVERY block `strobe recover` added from its journal, made by a
 * process recording 20 scopes with a value each, flushing, recording 10
 * more and killing itself).
 *
 * Clock pairs, GPU spans and marks (DEVICE blocks, docs/gpu.md) are read
 * like every record, and afterwards the device times the capture named are
 * mapped through their domain (strobe_capture_map_device), so hostile pairs
 * reach the fit.
 *
 * Sampler records (SAMPLES blocks, docs/exploration.md §Sampling; seed
 * ok-v4-samples.strb, a capture of tests/test_sampler.c's kind) name only
 * defined functions, at most STROBE_SAMPLE_MAX_FRAMES of them, and a thread
 * only when one with their OS thread id is defined.
 *
 * Every input is also read a batch at a time (strobe_capture_next_batch),
 * which must give what strobe_capture_next gives (tests/support/batch_check.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fix_crcs.h"
#include "format/codec.h"
#include "support/batch_check.h"
#include "strobe/capture.h"
#include "strobe/sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Results go here so the reads are not optimized away. */
static volatile size_t g_sink;
static volatile double g_dsink;

/* Touches every byte of a string so ASan sees a read past its end. */
static size_t touch(const char *s) { return s ? strlen(s) : 0; }

static void read_all(const uint8_t *data, size_t size);

/* A UI-tree snapshot (TREE record): every node names an element type, keeps
 * the preorder rule (so it rebuilds), and its properties' names are readable. */
static void check_tree(const strobe_capture *c, const strobe_capture_tree *t) {
  if (!t || (t->nnodes && !t->nodes)) abort();
  int32_t *parent = malloc(((size_t)t->nnodes + 1) * sizeof *parent);
  if (!parent) return;
  if (strobe_capture_tree_parents(t, parent) != 0) abort(); /* the reader refuses what does not rebuild */
  for (uint32_t i = 0; i < t->nnodes; i++) {
    const strobe_capture_tree_node *n = &t->nodes[i];
    const strobe_capture_site *type = strobe_capture_query_site(c, n->type);
    if (!type || type->kind != STROBE_SITE_ELEMENT) abort();
    if (parent[i] >= (int32_t)i || (parent[i] < 0) != (n->depth == 0)) abort();
    if (parent[i] >= 0 && t->nodes[parent[i]].depth + 1 != n->depth) abort();
    for (uint32_t k = 0; k < n->nprops; k++) g_sink += touch(n->props[k].name);
    g_dsink += (double)n->x + (double)n->y + (double)n->width + (double)n->height;
  }
  free(parent);
}

/* An attachment (ATTACHMENT record): a resource id, a media type, content
 * within the per-attachment bound and readable to its last byte when stored
 * here, none otherwise. */
static void check_attachment(const strobe_capture_attachment *a) {
  if (!a || a->resource == 0 || !a->media_type || a->size == 0 || a->size > STROBE_ATTACH_MAX_BYTES) abort();
  g_sink += touch(a->media_type);
  if ((a->state == STROBE_CAPTURE_ATTACH_STORED) != (a->bytes != NULL)) abort();
  if (a->state > STROBE_CAPTURE_ATTACH_CUT) abort();
  if (a->bytes) g_sink += ((const uint8_t *)a->bytes)[0] + ((const uint8_t *)a->bytes)[a->size - 1];
}

/* A deep capture (DEEP record): calls in sequence, labels readable,
 * references within their bound with a known role and a resource id. */
static void check_deep(const strobe_capture_deep *d) {
  if (!d || d->ncalls > STROBE_DEEP_MAX_CALLS || (d->ncalls && !d->calls)) abort();
  for (uint32_t i = 0; i < d->ncalls; i++) {
    const strobe_capture_draw_call *k = &d->calls[i];
    if (k->seq != i || k->nrefs > STROBE_DEEP_MAX_REFS || (k->nrefs != 0) != (k->refs != NULL)) abort();
    g_sink += touch(k->kind) + touch(k->pipeline) + touch(k->pass);
    for (uint32_t j = 0; j < k->nrefs; j++)
      if (k->refs[j].resource == 0 || k->refs[j].role < STROBE_DEEP_GEOMETRY || k->refs[j].role > STROBE_DEEP_SURFACE)
        abort();
    g_dsink += (double)k->bounds[0] + (double)k->clip[3];
  }
}

#define MAP_NAMES 4 /* domains whose device times are mapped after the read */
typedef struct mapped {
  char name[MAP_NAMES][300];
  uint64_t ticks[MAP_NAMES];
  int n;
} mapped;

static void remember(mapped *m, const strobe_capture_device *d, uint64_t ticks) {
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->name[i], d->domain)) return;
  if (m->n == MAP_NAMES || strlen(d->domain) >= sizeof m->name[0]) return;
  strcpy(m->name[m->n], d->domain);
  m->ticks[m->n++] = ticks;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  read_all(data, size);
  /* An exact-size copy, so ASan still catches a read one past the end. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  if (size) memcpy(copy, data, size);
  if (fix_crcs(copy, size)) read_all(copy, size);
  free(copy);
  return 0;
}

static void read_all(const uint8_t *data, size_t size) {
  size_t batched;
  if (batch_check(data, size, &batched)) abort();
  strobe_capture *c = NULL;
  if (strobe_capture_open_memory(data, size, &c) != 0) {
    if (c) abort(); /* on error *out is NULL */
    return;
  }
  const strobe_capture_header *h = strobe_capture_query_header(c);
  size_t sink = touch(h->kind) + touch(h->clock_source) + touch(h->strobe_version) + touch(h->os) +
                touch(h->arch) + touch(h->features);

  strobe_capture_record rec;
  int rc;
  mapped maps = {.n = 0};
  while ((rc = strobe_capture_next(c, &rec)) == 1) {
    int dev = rec.type == STROBE_REC_CLOCK_PAIR || rec.type == STROBE_REC_GPU_SPAN || rec.type == STROBE_REC_GPU_MARK ||
              rec.type == STROBE_REC_LANE_SPAN;
    if (dev != (rec.device != NULL)) abort();
    if (rec.device) {
      sink += touch(rec.device->domain) + touch(rec.device->queue) + touch(rec.device->pass);
      if ((rec.type == STROBE_REC_GPU_SPAN || rec.type == STROBE_REC_LANE_SPAN) &&
          rec.device->device_end < rec.device->device_begin)
        abort();
      if (rec.type == STROBE_REC_CLOCK_PAIR && rec.device->host_after < rec.device->host_before) abort();
      if (rec.type != STROBE_REC_GPU_MARK)
        remember(&maps, rec.device,
                 rec.type == STROBE_REC_GPU_SPAN ? rec.device->device_begin : rec.device->device_ticks);
    }
    if (rec.type == STROBE_REC_SITE && !strobe_capture_query_site(c, rec.site)) abort();
    int smp = rec.type == STROBE_REC_SAMPLE || rec.type == STROBE_REC_SWITCH;
    if (smp != (rec.sample != NULL)) abort();
    if (smp) { /* by OS thread: a known thread of that id, or none */
      const strobe_capture_thread *th = strobe_capture_query_thread(c, rec.thread);
      if (rec.thread != STROBE_CAPTURE_NO_THREAD && (!th || th->os_tid != rec.sample->os_tid)) abort();
      if (rec.sample->nframes > STROBE_SAMPLE_MAX_FRAMES) abort();
      for (uint32_t k = 0; k < rec.sample->nframes; k++) {
        const strobe_capture_function *f = strobe_capture_query_function(c, rec.sample->frames[k]);
        if (!f || f->id != rec.sample->frames[k]) abort();
        sink += touch(f->name) + touch(f->module);
      }
    }
    /* Sites, UI-tree snapshots, attachments and deep captures belong to the capture, sampler records to an OS
     * thread, every other record to a known thread. */
    int whole = rec.type == STROBE_REC_SITE || rec.type == STROBE_REC_TREE || rec.type == STROBE_REC_ATTACHMENT ||
                rec.type == STROBE_REC_DEEP;
    if (!whole && !smp && !strobe_capture_query_thread(c, rec.thread)) abort();
    if ((rec.type == STROBE_REC_ATTACHMENT) != (rec.attachment != NULL)) abort();
    if ((rec.type == STROBE_REC_DEEP) != (rec.deep != NULL)) abort();
    if (rec.attachment) check_attachment(rec.attachment);
    if (rec.deep) check_deep(rec.deep);
    g_dsink += strobe_capture_ticks_to_ns(c, rec.ticks) + rec.duration_ns + rec.self_ns; /* no int cast: NaN is fine */
    if (rec.type == STROBE_REC_ELEMENT) { /* an element attribution names an element type */
      const strobe_capture_site *type = strobe_capture_query_site(c, rec.site);
      if (!type || type->kind != STROBE_SITE_ELEMENT) abort();
      g_sink += (size_t)rec.element;
    }
    if (rec.type == STROBE_REC_TREE) check_tree(c, rec.tree);
  }
  if (strobe_capture_next(c, &rec) != rc) abort(); /* the end, or the error, is sticky */

  strobe_capture_totals t = strobe_capture_query_totals(c);
  if (rc == 0 && !t.footer && !t.cut_short) abort();
  for (int i = 0; i < maps.n; i++) {
    const uint64_t at[3] = {maps.ticks[i], 0, UINT64_MAX};
    for (int k = 0; k < 3; k++) {
      strobe_capture_mapping m;
      int r = strobe_capture_map_device(c, maps.name[i], at[k], &m);
      if (r != 0 && r != STROBE_ESTATE) abort();
      if (r == 0 && m.pairs == 0) abort();
      g_dsink += m.time_ns + m.bound_ns;
    }
  }
  uint32_t limit = strobe_capture_query_site_limit(c);
  if (limit > 65536) abort();
  for (uint32_t id = 0; id <= limit; id++) {
    const strobe_capture_site *s = strobe_capture_query_site(c, id);
    if (!s) continue;
    if (s->id != id || id >= limit) abort();
    sink += touch(s->name) + touch(s->category) + touch(s->file) + touch(s->function) + touch(s->parent);
  }
  uint32_t nfuncs = strobe_capture_query_function_limit(c);
  for (uint32_t id = 0; id <= nfuncs; id++) {
    const strobe_capture_function *f = strobe_capture_query_function(c, id);
    if (!f) continue;
    if (f->id != id || id >= nfuncs || id == 0) abort();
    sink += touch(f->name) + touch(f->module);
  }
  if (t.sample_unresolved > t.sample_functions) abort();
  uint32_t nthreads = strobe_capture_query_thread_count(c);
  for (uint32_t i = 0; i <= nthreads; i++) {
    const strobe_capture_thread *th = strobe_capture_query_thread(c, i);
    if (!th) continue;
    if (th->index != i || i >= nthreads) abort();
    sink += touch(th->name);
  }
  strobe_capture_close(c);
  g_sink += sink;
}
