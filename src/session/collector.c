/*
 * collector.c — a collector's life (create, handles, close), its windows
 * (bounded slots, untracked counting, closed metadata kept until its slot is
 * needed), memory gauges, run metadata, the shared window-name strings, and
 * who it is to other processes (its random id, pid and process label).
 *
 * Must never: hold the collector lock while measuring, allocating a report or
 * calling into application code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/clock.h"
#include "platform/host.h"
#include "probe/probe.h"
#include "session/session_internal.h"

/* >>names */
strobe__name *strobe__name_new(const char *s, size_t len) {
  strobe__name *n = malloc(sizeof *n + len + 1);
  if (!n) return NULL;
  n->refs = 1;
  n->len = (uint32_t)len;
  memcpy(n->text, s, len);
  n->text[len] = 0;
  return n;
}

strobe__name *strobe__name_ref(strobe__name *n) {
  if (n) __atomic_fetch_add(&n->refs, 1, __ATOMIC_RELAXED);
  return n;
}

void strobe__name_unref(strobe__name *n) {
  if (n && __atomic_sub_fetch(&n->refs, 1, __ATOMIC_ACQ_REL) == 0) free(n);
}

/* >>labels: names under the label rule (docs/sessions.md §The label rule; strobe__label_len). */
int strobe__label_valid(const char *label) { return strobe__label_len(label, STROBE__RULE_NAME) > 0; }

/* >>lifecycle */
int strobe_collector_create(strobe_collector **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!STROBE__PROFILING) return STROBE_EFEATURE_DISABLED;
  strobe_collector *c = calloc(1, sizeof *c);
  if (!c) return STROBE_ENOMEM;
  c->refs = 1;
  strobe__mutex_init(&c->lock);
  /* No clock calibration here (it spins ~5 ms): a collector is created at
   * application start-up; readers calibrate on their own thread when needed. */
  c->epoch = strobe__now();
  c->next_seq = c->next_session = c->next_app_id = 1;
  /* Who it is in operation tokens (docs/sessions.md §Across processes). */
  if (strobe__host_random_u64(&c->uid)) {
    strobe__mutex_destroy(&c->lock);
    free(c);
    return STROBE_EIO;
  }
  c->pid = strobe__host_pid();
  snprintf(c->process, sizeof c->process, "pid_%u", (unsigned)c->pid);
  static uint32_t g_numbers;
  c->number = __atomic_add_fetch(&g_numbers, 1, __ATOMIC_RELAXED);
  *out = c;
  return 0;
}

static strobe_collector *g_default;
static pthread_once_t g_default_once = PTHREAD_ONCE_INIT;

static void create_default(void) { (void)strobe_collector_create(&g_default); }

strobe_collector *strobe_default_collector(void) {
  pthread_once(&g_default_once, create_default);
  return g_default;
}

strobe_collector *strobe_collector_retain(strobe_collector *c) {
  if (c) __atomic_fetch_add(&c->refs, 1, __ATOMIC_RELAXED);
  return c;
}

static void session_clear(strobe__session *s) {
  for (uint32_t i = 0; i < s->count; i++) strobe__sample_unref(s->ring[(s->head + i) % s->max_samples]);
  for (uint32_t i = 0; i < s->app_count; i++) strobe__app_record_unref(s->app_ring[(s->app_head + i) % s->max_app]);
  free(s->ring);
  free(s->app_ring);
  if (s->active) strobe__gpu_live_hold(-1);
  memset(s, 0, sizeof *s);
}

void strobe_collector_release(strobe_collector *c) {
  if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  for (int i = 0; i < STROBE_MAX_SESSIONS; i++) session_clear(&c->sessions[i]);
  for (int i = 0; i < STROBE_MAX_WINDOWS; i++) strobe__name_unref(c->windows[i].name);
  for (int i = 0; i < STROBE_MAX_LIVE_OPS; i++) strobe__name_unref(c->ops[i].window);
  for (int i = 0; i < STROBE_MAX_LIVE_APP_SCOPES; i++) strobe__name_unref(c->apps[i].window);
  strobe__mutex_destroy(&c->lock);
  free(c);
}

void strobe_collector_close(strobe_collector *c) {
  if (!c) return;
  strobe__mutex_lock(&c->lock);
  if (!c->closed) {
    c->closed = 1;
    strobe__abandon_live(c, -1, 1);
    for (int i = 0; i < STROBE_MAX_WINDOWS; i++) {
      c->windows[i].open = 0;
      __atomic_and_fetch(&c->windows[i].frames_key, STROBE__FK_PASSES, __ATOMIC_RELAXED); /* closed to idle begins */
    }
  }
  strobe__mutex_unlock(&c->lock);
}

/* >>process: its label and what it did with operation tokens (docs/sessions.md §Across processes) */
int strobe_collector_set_process(strobe_collector *c, const char *label) {
  if (!c || !label) return STROBE_EINVAL;
  size_t n = strobe__label_len(label, STROBE__RULE_NAME);
  if (!n) {
    strobe__label_refused(c);
    return STROBE_ELABEL;
  }
  strobe__mutex_lock(&c->lock);
  memcpy(c->process, label, n + 1);
  strobe__mutex_unlock(&c->lock);
  return 0;
}

int strobe_collector_query_remote_stats(strobe_collector *c, strobe_remote_stats *out) {
  if (!c || !out) return STROBE_EINVAL;
  strobe__mutex_lock(&c->lock);
  *out = c->remote;
  strobe__mutex_unlock(&c->lock);
  return 0;
}

/* >>labels (docs/sessions.md §The label rule; the check itself is the probe's, strobe__label_rule_len) */
size_t strobe__label_len(const char *s, int rule) {
  return rule == STROBE__RULE_WINDOW ? strobe__label_rule_len(s, STROBE_MAX_WINDOW_ID, 1)
                                     : strobe__label_rule_len(s, STROBE_MAX_LABEL, 0);
}

int strobe_label_valid(const char *label) { return strobe__label_len(label, STROBE__RULE_NAME) != 0; }

void strobe__label_replaced(strobe_collector *c) {
  if (c) __atomic_fetch_add(&c->labels_replaced, 1, __ATOMIC_RELAXED);
}

void strobe__label_refused(strobe_collector *c) {
  if (c) __atomic_fetch_add(&c->labels_refused, 1, __ATOMIC_RELAXED);
}

/* >>windows */
int strobe__window_slot_of(strobe_collector *c, strobe_window w) {
  STROBE_ASSERT(strobe__mutex_held(&c->lock));
  uint32_t slot = strobe__handle_slot(w.id);
  if (w.id == 0 || slot >= STROBE_MAX_WINDOWS) return -1;
  const strobe__window_slot *ws = &c->windows[slot];
  return ws->open && ws->gen == strobe__handle_gen(w.id) ? (int)slot : -1;
}

int strobe_window_register(strobe_collector *c, const char *id, uint32_t flags, strobe_window *out) {
  if (!c || !id || !out) return STROBE_EINVAL;
  out->id = 0;
  size_t n = strnlen(id, STROBE_MAX_WINDOW_ID + 1);
  strobe__mutex_lock(&c->lock);
  int rc = 0;
  if (c->closed) {
    rc = STROBE_ECLOSED;
    goto done;
  }
  if (!strobe__label_len(id, STROBE__RULE_WINDOW)) { /* the label rule: never a title or a path with spaces */
    c->untracked_windows++;
    strobe__label_refused(c);
    rc = STROBE_ELABEL;
    goto done;
  }
  int free_slot = -1, closed_slot = -1;
  for (int i = 0; i < STROBE_MAX_WINDOWS; i++) {
    strobe__window_slot *ws = &c->windows[i];
    if (ws->open && ws->name->len == n && !memcmp(ws->name->text, id, n)) {
      rc = STROBE_EBUSY;
      goto done;
    }
    if (!ws->used && free_slot < 0) free_slot = i;
    if (ws->used && !ws->open && (closed_slot < 0 || ws->closed_seq < c->windows[closed_slot].closed_seq))
      closed_slot = i;
  }
  int slot = free_slot >= 0 ? free_slot : closed_slot;
  if (slot < 0) {
    c->untracked_windows++;
    rc = STROBE_ELIMIT;
    goto done;
  }
  strobe__name *name = strobe__name_new(id, n);
  if (!name) {
    rc = STROBE_ENOMEM;
    goto done;
  }
  strobe__window_slot *ws = &c->windows[slot];
  strobe__name_unref(ws->name); /* closed metadata, now that its slot is needed */
  ws->name = name;
  ws->gen++;
  ws->open = ws->used = 1;
  ws->flags = flags;
  ws->label = 0;
  out->id = strobe__handle((uint32_t)slot, ws->gen);
  __atomic_store_n(&ws->frames_key, strobe__fk(out->id, 0), __ATOMIC_RELAXED);
done:
  strobe__mutex_unlock(&c->lock);
  return rc;
}

int strobe_window_close(strobe_collector *c, strobe_window w) {
  if (!c) return STROBE_EINVAL;
  strobe__mutex_lock(&c->lock);
  int slot = strobe__window_slot_of(c, w);
  if (slot >= 0) {
    strobe__abandon_live(c, slot, 0);
    c->windows[slot].open = 0;
    __atomic_and_fetch(&c->windows[slot].frames_key, STROBE__FK_PASSES, __ATOMIC_RELAXED); /* closed to idle begins */
    c->windows[slot].closed_seq = ++c->close_seq;
  }
  strobe__mutex_unlock(&c->lock);
  return slot >= 0 ? 0 : STROBE_EWINDOW;
}

int strobe_window_find(strobe_collector *c, const char *id, strobe_window *out) {
  if (!c || !id || !out) return STROBE_EINVAL;
  size_t n = strnlen(id, STROBE_MAX_WINDOW_ID + 1);
  int rc = STROBE_EWINDOW;
  out->id = 0;
  strobe__mutex_lock(&c->lock);
  for (int i = 0; i < STROBE_MAX_WINDOWS; i++) {
    strobe__window_slot *ws = &c->windows[i];
    if (ws->open && ws->name->len == n && !memcmp(ws->name->text, id, n)) {
      out->id = strobe__handle((uint32_t)i, ws->gen);
      rc = 0;
      break;
    }
  }
  strobe__mutex_unlock(&c->lock);
  return rc;
}

/* >>gauges and run metadata */
static void gauge_set(strobe_collector *c, const char *name, const char *kind, double value, strobe_unit unit);

void strobe_collector_gauge_set(strobe_collector *c, const char *name, double value) {
  strobe_collector_gauge_set_unit(c, name, value, STROBE_UNIT_NONE);
}

void strobe_collector_gauge_set_unit(strobe_collector *c, const char *name, double value, strobe_unit unit) {
  gauge_set(c, name, NULL, value, unit);
}

void strobe_collector_gauge_set_kind(strobe_collector *c, const char *family, const char *kind, double value,
                                     strobe_unit unit) {
  if (!family) return;
  gauge_set(c, family, kind ? kind : "", value, unit); /* a NULL kind breaks the rule like any bad label */
}

/* A gauge (name, kind) of the collector; kind NULL: none. */
static void gauge_set(strobe_collector *c, const char *name, const char *kind, double value, strobe_unit unit) {
  if (!c || !name) return;
  uint64_t now = strobe__now();
  uint64_t mono = strobe__mono_ns(); /* the rate limit needs no tick calibration */
  strobe__mutex_lock(&c->lock);
  /* The name is copied: the report never points into the caller's memory.
   * One that breaks the label rule is kept under the placeholder, counted. */
  if (!strobe__label_len(name, STROBE__RULE_NAME)) {
    strobe__label_replaced(c);
    name = STROBE_INVALID_LABEL;
  }
  if (!kind) {
    kind = "";
  } else if (!strobe__label_len(kind, STROBE__RULE_NAME)) {
    strobe__label_replaced(c);
    kind = STROBE_INVALID_LABEL;
  }
  strobe__gauge *g = NULL;
  for (uint32_t i = 0; i < c->ngauges; i++)
    if (!strcmp(c->gauges[i].name, name) && !strcmp(c->gauges[i].kind, kind)) g = &c->gauges[i];
  if (!g && c->ngauges < STROBE_MAX_GAUGES) {
    g = &c->gauges[c->ngauges++];
    strcpy(g->name, name);
    strcpy(g->kind, kind);
    g->sampled = 0;
    g->unit = strobe_unit_name(unit) ? unit : STROBE_UNIT_NONE; /* a gauge keeps its first unit */
  } else if (!g) {
    c->gauges_dropped++;
  }
  /* At most one sample a second: a gauge is a level, not a trace. */
  if (g && (g->sampled == 0 || mono - g->sampled_mono_ns >= 1000000000ull)) {
    g->value = value;
    g->sampled = now;
    g->sampled_mono_ns = mono;
  }
  strobe__mutex_unlock(&c->lock);
}

double strobe_collector_measure_overhead(strobe_collector *c) {
  if (!c) return 0.0;
  double ns = strobe__measure_cost().scope_ns;
  strobe__mutex_lock(&c->lock);
  c->overhead_ns = ns;
  strobe__mutex_unlock(&c->lock);
  return ns;
}

int strobe_collector_set_run_info(strobe_collector *c, const char *key, const char *value) {
  if (!c || !key || !value || strlen(value) >= sizeof c->run_values[0]) return STROBE_EINVAL;
  if (!strobe__label_len(key, STROBE__RULE_NAME)) {
    strobe__label_refused(c);
    return STROBE_ELABEL;
  }
  strobe__mutex_lock(&c->lock);
  int rc = 0;
  uint32_t i = 0;
  while (i < c->nrun && strcmp(c->run_keys[i], key)) i++;
  if (i == c->nrun) {
    if (c->nrun == STROBE__MAX_RUN_INFO)
      rc = STROBE_ELIMIT;
    else
      strcpy(c->run_keys[c->nrun++], key);
  }
  if (!rc) strcpy(c->run_values[i], value);
  strobe__mutex_unlock(&c->lock);
  return rc;
}
