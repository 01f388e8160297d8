/*
 * collect.h — the collect layer's internal interface: the drain thread and
 * the fan-out of drained events to consumers (capture files, the flight
 * recorder, live streams). The per-thread state it drains and the site
 * registry belong to the probe layer (probe/probe.h).
 *
 * Threading: consumers are called only from the drain thread, with the
 * drain lock held, one at a time.
 */
#ifndef STROBE_COLLECT_H
#define STROBE_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "strobe/deep.h"
#include "strobe/tree.h"

#define STROBE__MAX_CONSUMERS 8 /* event consumers at once (files, flight recorder, streams) */

/* >>op-gate: whether anything listens to operations, stages and their
 * counters (docs/sessions.md §Cost when nothing listens). Read relaxed, once,
 * by the calls that can then do nothing. Sessions do not touch strobe__active
 * (scopes must stay idle under a session), hence a word of its own. */
#define STROBE__OPGATE_EVENTS 1u  /* an event consumer is active (mirrors STROBE__ACTIVE_EVENTS) */
#define STROBE__OPGATE_SESSION 2u /* added per active session of any collector, taken away at its end */
/* Hidden from the shared library's exports: an ELF notion, given empty by
 * src/platform/compat_windows.h where PE has none. */
#ifndef STROBE__HIDDEN
#define STROBE__HIDDEN __attribute__((visibility("hidden")))
#endif
extern STROBE__HIDDEN uint32_t strobe__op_gate;

/* An array the application thread fills (a snapshot's nodes, a deep
 * capture's calls): grows *p, *cap elements of `size` bytes, by doubling from
 * `first` until `need` fit. Returns 0, or STROBE_ENOMEM with *p and *cap as
 * they were. */
static inline int strobe__grow(void **p, uint32_t *cap, uint32_t need, size_t size, uint32_t first) {
  if (need <= *cap) return 0;
  uint32_t n = *cap ? *cap : first;
  while (n < need) n *= 2;
  void *q = realloc(*p, (size_t)n * size);
  if (!q) return STROBE_ENOMEM;
  *p = q;
  *cap = n;
  return 0;
}

/* >>trees (src/collect/tree.c, strobe/tree.h): a closed UI-tree snapshot
 * waiting for the drain, which hands it to every consumer with a `tree`
 * callback (capture files, flight recorders; never live streams). */
typedef struct strobe__tree_node {
  uint64_t id;         /* strobe_element_id */
  float bounds[4];     /* x, y, width, height */
  uint32_t depth;
  uint32_t type;       /* site id of its element type (registered at push) */
  uint32_t prop0;      /* its first property in strobe__tree.props */
  uint32_t nprops;
} strobe__tree_node;
typedef struct strobe__tree_prop {
  uint32_t key;        /* index into strobe__tree.keys */
  double value;
} strobe__tree_prop;
typedef struct strobe__tree {
  void *next;          /* the next closed snapshot (a strobe__tree): handoff.h's link, first */
  uint64_t seq;        /* the process's snapshot number, from 1 */
  uint64_t ticks;      /* when strobe_tree_begin returned 1 */
  uint32_t nnodes, cap_nodes;
  uint32_t nprops, cap_props;
  uint64_t nodes_dropped, props_dropped;
  uint32_t nkeys;
  const char *keys[STROBE_TREE_MAX_KEYS]; /* static names, in order of first use */
  strobe__tree_node *nodes;
  strobe__tree_prop *props;
} strobe__tree;
/* The drain takes every closed snapshot (oldest first; NULL when none)... */
strobe__tree *strobe__tree_take(void);
/* ...and gives each back with the encoded bytes the consumers wrote (0:
 * none took it), which frees it and counts it in strobe_tree_query_status. */
void strobe__tree_done(strobe__tree *t, uint64_t bytes);

/* >>content (src/collect/deep.c, strobe/deep.h): an attachment or a closed
 * deep capture waiting for the drain, which hands it to every consumer with
 * a `content` callback (capture files only: application content). */
typedef struct strobe__draw {
  uint32_t kind, pipeline, pass; /* indexes into strobe__content.labels */
  uint32_t vertex_first, vertex_count, instance_first, instance_count;
  uint32_t ref0, nrefs;          /* its references in strobe__content.refs */
  uint32_t has_geometry;
  float bounds[4], clip[4];
} strobe__draw;
enum { STROBE__CONTENT_ATTACH = 1, STROBE__CONTENT_DEEP = 2 };
typedef struct strobe__content {
  void *next;          /* the next queued item (a strobe__content): handoff.h's link, first */
  uint32_t type;       /* STROBE__CONTENT_ATTACH or _DEEP */
  uint64_t frame;      /* the application's frame id */
  uint64_t ticks;      /* when it was attached / the deep capture began */
  /* ATTACH */
  uint64_t resource;
  char media_type[STROBE_MEDIA_TYPE_MAX + 1];
  uint32_t width, height;
  size_t size;         /* bytes of `bytes`, rows packed */
  uint8_t *bytes;      /* owned */
  /* DEEP */
  uint64_t seq;        /* the process's deep capture number, from 1 */
  uint32_t ncalls, cap_calls;
  uint64_t calls_dropped;
  strobe__draw *calls;
  strobe_draw_ref *refs;
  uint32_t nrefs, cap_refs;
  uint32_t nlabels;
  const char *labels[STROBE_DEEP_MAX_LABELS]; /* static labels, in order of first use */
  uint64_t *resources; /* ids captured by strobe_deep_resource in this deep capture */
  uint32_t nresources, cap_resources;
  uint64_t resource_bytes;
} strobe__content;
/* The drain takes every queued item (oldest first; NULL when none)... */
strobe__content *strobe__content_take(void);
/* ...and gives each back with the bytes the consumers wrote (0: none took
 * it), which frees it and counts it in strobe_deep_query_status. */
void strobe__content_done(strobe__content *c, uint64_t bytes);

/* >>ring runs: events as the hot path wrote them (strobe.h: an inline BEGIN
 * or number is its site pointer over kind and data, an inline END has data
 * 0, a VALUE's time is left to the drain), for a consumer that completes
 * and encodes them in one pass (the capture writer, docs/recording.md §What
 * a capture says it cost) instead of reading the drain's converted copy.
 *
 * The drain's site cache: site pointer -> what the drain needs of it.
 * Direct-mapped, drain-private (the usual BEGIN costs no atomic load, which
 * ThreadSanitizer makes expensive). `ev` is BEGIN for timed sites, the
 * number's kind for number sites, ELEMENT for element types, 0 for a number
 * site or element type that cannot be registered; `num` is how the hot path
 * stored a number site's number (STROBE__NUM_*). An entry is filled only by
 * the drain's conversion, which delivers the site before any event that
 * names it: a site found here has been delivered. */
#define STROBE__SITE_CACHE_BITS 8
#define STROBE__SITE_CACHE (1u << STROBE__SITE_CACHE_BITS)
typedef struct strobe__site_info { /* 16 bytes */
  const strobe_site *site;
  uint32_t id;
  uint16_t ev, num;
} strobe__site_info;
/* The entry a site pointer maps to; the site is cached when that entry's
 * `site` is it. Multiplicative hashing: sites are spaced alike (static ones
 * by the struct's size, interned ones by their allocation's), which a plain
 * modulo would fold onto a few entries. */
static inline uint32_t strobe__site_slot(uint64_t site) {
  return (uint32_t)((site * 0x9e3779b97f4a7c15ull) >> (64 - STROBE__SITE_CACHE_BITS));
}
/* The double a number's payload bits stand for, as the hot path stored them
 * (`num`: STROBE__NUM_*; an interned site's numbers say theirs in the
 * slot's data, strobe__number_coded), as the bits of a double. */
static inline uint64_t strobe__number_bits(uint64_t bits, uint32_t num) {
  double d;
  if (num == STROBE__NUM_I64)
    d = (double)(int64_t)bits;
  else if (num == STROBE__NUM_U64)
    d = (double)bits;
  else
    return bits;
  memcpy(&bits, &d, sizeof bits);
  return bits;
}
/* One thread's ring events handed to strobe__consumer.ring_events, with the
 * drain's conversion state of that thread, which the consumer advances
 * exactly as the drain's conversion would for every event it takes. */
typedef struct strobe__ring_run {
  const strobe__event *ev;        /* ring form, in order; a number's payload slot follows it */
  size_t n;
  const strobe__site_info *cache; /* STROBE__SITE_CACHE entries */
  uint32_t open;                  /* in/out: the thread's open scopes... */
  uint32_t *open_site;            /* ...and their site ids (STROBE_MAX_DEPTH entries; deeper ones not kept) */
  uint64_t last_ts;               /* in/out: the time of the last timed event (a VALUE's time) */
} strobe__ring_run;

/* >>consumers */
typedef struct strobe__consumer {
  void *ctx;
  /* A site, delivered once before any event that references it. */
  void (*site)(void *ctx, uint32_t id, const strobe_site *site);
  /* A label (probe/probe.h >>labels), delivered once before any event that names it. */
  void (*label)(void *ctx, uint32_t id, const char *text);
  /* A thread's identity and its process-lifetime loss count when first seen;
   * delivered again when its name changes. */
  void (*thread)(void *ctx, uint32_t index, uint64_t os_tid, const char *name, uint64_t lost);
  /* The thread's process-lifetime loss count grew (consumers keep the difference). */
  void (*lost)(void *ctx, uint32_t index, uint64_t lost);
  /* Events of one thread, in order, possibly over several calls (a multi-slot event never is split). */
  void (*events)(void *ctx, uint32_t index, const strobe__event *ev, size_t n);
  /* The thread exited; no more events will come from it. */
  void (*thread_end)(void *ctx, uint32_t index);
  /* End of a drain pass, with the current tick: time to flush if due. */
  void (*tick)(void *ctx, uint64_t now);
  /* A UI-tree snapshot (>>trees), after the sites it names. Returns the
   * bytes it wrote (before compression), 0 when it refused it (its
   * capture's bound). NULL: this consumer takes no application content. */
  uint64_t (*tree)(void *ctx, const strobe__tree *t);
  /* Sampler records (probe.h >>sampler), sorted by thread then time, their
   * frames function ids (strobe__sample_function). NULL: this consumer
   * takes none (the function names are application content). */
  void (*samples)(void *ctx, const strobe__cpu_sample *s, size_t n, const uint32_t *frames);
  /* An attachment or a deep capture (>>content), after the sites delivered
   * so far. Returns the bytes it wrote (before compression), 0 when it
   * refused it. NULL: this consumer takes no application content. */
  uint64_t (*content)(void *ctx, const strobe__content *c);
  /* Events of one thread in their ring form (>>ring runs), offered instead
   * of `events` when this is the only consumer. Takes a prefix of the run
   * (BEGIN, END and numbers of cached sites: whole events, a number with its
   * slot) and returns its length; the drain converts what it left and hands
   * that to `events`. 0 is always allowed. NULL: `events` only. */
  size_t (*ring_events)(void *ctx, uint32_t index, strobe__ring_run *run);
} strobe__consumer;

/* Adds a consumer: it first receives every known site and live thread, then
 * events from the next drain pass on. Returns 0, STROBE_ELIMIT or STROBE_ENOMEM. */
int strobe__consumer_add(strobe__consumer *c);
/* Consumers taking application content (a `content` callback: capture
 * files) added and not removed. Safe from any thread. */
int strobe__content_consumers(void);
/* When the oldest recording still running started (consumers went from none
 * to one), in CLOCK_MONOTONIC ns: the start of the capture that has been
 * recording longest. Safe from any thread. Exported: libstrobe_server's
 * producer endpoint bounds span times by it (docs/server.md). */
STROBE_API uint64_t strobe__recording_since_mono_ns(void);
/* Runs a final drain pass so the consumer has every event written before this call, then removes it. */
void strobe__consumer_remove(strobe__consumer *c);
/* Asks the drain thread for a pass soon. Safe from any thread, never blocks for long. */
void strobe__drain_wake(void);
/* The drain's cost since the library loaded (docs/recording.md, Cost): CPU
 * time of the threads running passes (CLOCK_THREAD_CPUTIME_ID around each
 * pass) and the events those passes delivered. Safe from any thread. */
typedef struct strobe__drain_cost {
  uint64_t cpu_ns;
  uint64_t events;
  uint64_t passes;
} strobe__drain_cost;
strobe__drain_cost strobe__drain_query_cost(void);
/* The drain's cost since `base` (an earlier strobe__drain_query_cost()). */
strobe__drain_cost strobe__drain_cost_since(const strobe__drain_cost *base);
/* The drain's rests (docs/recording.md §The drain): waits longer than
 * drain_interval_ms with the producers armed, and those a producer's first
 * event ended (the rest's wake). Safe from any thread. */
typedef struct strobe__drain_rests {
  uint64_t rests;   /* rests begun */
  uint64_t woken;   /* ended by a producer's slow path, not by their time running out */
  int resting;      /* 1 while the drain thread is in one */
} strobe__drain_rests;
strobe__drain_rests strobe__drain_query_rests(void);
/* >>footprint: Strobe's own live memory (docs/recording.md §Strobe's own
 * footprint), by kind. The drain thread records it as the gauge family
 * STROBE__FOOTPRINT_FAMILY, one kind per row, about once a second while a
 * consumer records, so captures, reports and the viewer show it beside the
 * application's memory. X(ID, kind label). */
#define STROBE__FOOTPRINT_FAMILY "strobe_memory"
#define STROBE__FOOTPRINT_KINDS(X)                                                                     \
  X(RINGS, "rings")                     /* per-thread state and rings at the size they attached with */ \
  X(RINGS_GROWN, "rings_grown")         /* what rings grew by (overflow mode grow), old rings not yet freed included */ \
  X(FLIGHT_RECORDER, "flight_recorder") /* the flight recorders' in-memory rings */                       \
  X(INTERNED_NAMES, "interned_names")   /* names copied by strobe_site_intern */
enum {
#define STROBE__FOOT_ENUM(id, label) STROBE__FOOT_##id,
  STROBE__FOOTPRINT_KINDS(STROBE__FOOT_ENUM)
#undef STROBE__FOOT_ENUM
  STROBE__FOOT_COUNT
};
typedef struct strobe__footprint {
  uint64_t bytes[STROBE__FOOT_COUNT];
} strobe__footprint;
/* Upper layers that hold memory for Strobe say so here (the flight recorder:
 * + its ring when it starts, - when it stops). Safe from any thread. */
void strobe__footprint_add(uint32_t kind, int64_t bytes);
/* The footprint now. Safe from any thread (takes the thread list lock). */
strobe__footprint strobe__footprint_query(void);
/* Runs one drain pass now, on the calling thread (tests, flush on demand). */
void strobe__drain_now(void);
/* 1 when the calling thread holds the drain lock. "The drain thread" is a
 * role: drain.c's own thread, strobe__drain_now's caller and consumer
 * add/remove all run passes under that lock, and consumers are called only
 * there. Defined in checking builds only: use it inside STROBE_ASSERT
 * (platform/invariant.h), where a release build never evaluates it. */
int strobe__drain_held(void);

#endif
