/*
 * replay.c — replaying a deep capture from a capture file (strobe/replay.h,
 * docs/recording.md §Replay): finds one frame's deep capture, copies it and
 * the contents of the resources its calls read, and steps through the calls
 * with a backend, giving each call a status.
 *
 * Owns: the copies (the calls, their labels and references, the resources'
 * bytes, the frame's attachments), nothing global.
 * Must never: call a backend's draw for a call whose status is not OK (the
 * status, not a blank, says what is missing); hold more than the deep
 * capture, the contents it references and the frame's attachments (each
 * bounded by the reader: STROBE_DEEP_MAX_CALLS calls, STROBE_ATTACH_MAX_BYTES
 * per content).
 */
#include <stdlib.h>
#include <string.h>

#include "strobe/replay.h"

struct strobe_replay {
  strobe_capture_deep deep;
  strobe_capture_draw_call *calls;
  strobe_draw_ref *refs;
  char *labels;                /* every call's kind, pipeline and pass, NUL-terminated, back to back */
  uint64_t *wanted;            /* resource ids the calls reference, sorted, distinct */
  uint32_t nwanted;
  strobe_replay_resource *res; /* contents found, one per wanted id at most */
  uint32_t nres;
  strobe_replay_resource *att; /* the frame's attachments, in capture order */
  uint32_t natt, cap_att;
  uint64_t seq;                /* the deep capture wanted: its number (0: the frame's first) */
  uint32_t origin;             /* its strobe_capture_record.origin: the frame's attachments kept are of the same */
  int damage;                  /* the reader error that cut the contents pass short (0: read to the end)... */
  uint64_t damage_at;          /* ...and the byte near which it was met */
};

const char *strobe_replay_status_name(strobe_replay_status s) {
  switch (s) {
#define STROBE__REPLAY_NAME(id, value, name) \
  case STROBE_REPLAY_##id: return name;
    STROBE_REPLAY_STATUSES(STROBE__REPLAY_NAME)
#undef STROBE__REPLAY_NAME
    default: return "unknown";
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int wanted(const strobe_replay *r, uint64_t id) {
  return bsearch(&id, r->wanted, r->nwanted, sizeof id, cmp_u64) != NULL;
}

/* Copies the deep capture out of the reader's record. */
static int copy_deep(strobe_replay *r, const strobe_capture_deep *d) {
  size_t text = 0, nrefs = 0;
  for (uint32_t i = 0; i < d->ncalls; i++) {
    const strobe_capture_draw_call *c = &d->calls[i];
    text += strlen(c->kind) + strlen(c->pipeline) + strlen(c->pass) + 3;
    nrefs += c->nrefs;
  }
  r->calls = calloc(d->ncalls ? d->ncalls : 1, sizeof *r->calls);
  r->refs = calloc(nrefs ? nrefs : 1, sizeof *r->refs);
  r->labels = malloc(text ? text : 1);
  r->wanted = malloc((nrefs ? nrefs : 1) * sizeof *r->wanted);
  if (!r->calls || !r->refs || !r->labels || !r->wanted) return STROBE_ENOMEM;
  char *p = r->labels;
  size_t k = 0;
  for (uint32_t i = 0; i < d->ncalls; i++) {
    strobe_capture_draw_call *c = &r->calls[i];
    *c = d->calls[i];
    const char **s[3] = {&c->kind, &c->pipeline, &c->pass};
    for (int j = 0; j < 3; j++) {
      size_t n = strlen(*s[j]) + 1;
      memcpy(p, *s[j], n);
      *s[j] = p;
      p += n;
    }
    if (c->nrefs) memcpy(r->refs + k, d->calls[i].refs, c->nrefs * sizeof *r->refs);
    c->refs = c->nrefs ? r->refs + k : NULL;
    for (uint32_t j = 0; j < c->nrefs; j++) r->wanted[k + j] = c->refs[j].resource;
    k += c->nrefs;
  }
  qsort(r->wanted, k, sizeof *r->wanted, cmp_u64);
  uint32_t n = 0;
  for (size_t i = 0; i < k; i++)
    if (n == 0 || r->wanted[n - 1] != r->wanted[i]) r->wanted[n++] = r->wanted[i];
  r->nwanted = n;
  r->res = calloc(n ? n : 1, sizeof *r->res);
  if (!r->res) return STROBE_ENOMEM;
  r->deep = *d;
  r->deep.calls = r->calls;
  return 0;
}

static strobe_replay_resource *found(const strobe_replay *r, uint64_t id) {
  for (uint32_t i = 0; i < r->nres; i++)
    if (r->res[i].id == id) return &r->res[i];
  return NULL;
}

/* A copy of an attachment record's description and, when given, bytes. */
static int fill(strobe_replay_resource *x, const strobe_capture_attachment *a, const void *bytes, size_t size) {
  *x = (strobe_replay_resource){a->resource, NULL, a->width, a->height, NULL, 0, a->state};
  char *m = malloc(strlen(a->media_type) + 1);
  void *b = bytes ? malloc(size) : NULL;
  if (!m || (bytes && !b)) {
    free(m);
    free(b);
    return STROBE_ENOMEM;
  }
  strcpy(m, a->media_type);
  if (b) memcpy(b, bytes, size);
  x->media_type = m;
  x->bytes = b;
  x->size = bytes ? size : 0;
  return 0;
}

/* Reads the capture once, handing every record to `step`; returns 0 at its
 * clean end, or the first error (the reader's or step's). A damaged
 * attachment block is skipped (strobe_capture_set_skip_damaged_content):
 * with `contents`, the pass that reads them, it is noted in r->damage. */
static int read_capture(const char *path, int (*step)(strobe_replay *, const strobe_capture_record *, uint64_t),
                        strobe_replay *r, uint64_t frame, int contents) {
  strobe_capture *cap;
  int rc = strobe_capture_open(path, &cap);
  if (rc) return rc;
  strobe_capture_set_skip_damaged_content(cap, 1);
  strobe_capture_record rec;
  while ((rc = strobe_capture_next(cap, &rec)) > 0) {
    int s = step(r, &rec, frame);
    if (s < 0) {
      rc = s;
      break;
    }
    if (s == 1) { /* done early */
      rc = 0;
      break;
    }
  }
  strobe_capture_totals t = strobe_capture_query_totals(cap);
  if (contents && rc < 0 && rc != STROBE_ENOMEM) { /* damage after the deep capture: what came before it stays */
    r->damage = rc, r->damage_at = strobe_capture_query_position(cap);
    rc = 0;
  }
  if (contents && t.attach_damaged && (!r->damage || t.attach_damaged_at < r->damage_at))
    r->damage = STROBE_ECORRUPT, r->damage_at = t.attach_damaged_at;
  strobe_capture_close(cap);
  return rc;
}

static int step_find(strobe_replay *r, const strobe_capture_record *rec, uint64_t frame) {
  if (rec->type != STROBE_REC_DEEP || rec->deep->frame != frame || (r->seq && rec->deep->seq != r->seq)) return 0;
  r->origin = rec->origin;
  int rc = copy_deep(r, rec->deep);
  return rc ? rc : 1;
}

static int step_contents(strobe_replay *r, const strobe_capture_record *rec, uint64_t frame) {
  if (rec->type != STROBE_REC_ATTACHMENT) return 0;
  const strobe_capture_attachment *a = rec->attachment;
  if (a->state == STROBE_CAPTURE_ATTACH_STORED && wanted(r, a->resource) && !found(r, a->resource)) {
    int rc = fill(&r->res[r->nres], a, a->bytes, (size_t)a->size);
    if (rc) return rc;
    r->nres++;
  }
  if (a->frame != frame || rec->origin != r->origin) return 0; /* another process's frame of that id (a merge) */
  if (r->natt == r->cap_att) {
    uint32_t cap = r->cap_att ? r->cap_att * 2 : 16;
    strobe_replay_resource *p = realloc(r->att, cap * sizeof *p);
    if (!p) return STROBE_ENOMEM;
    r->att = p;
    r->cap_att = cap;
  }
  /* Content stored in this record, or earlier in the capture (once per resource). */
  const void *bytes = a->bytes;
  size_t size = (size_t)a->size;
  if (!bytes && a->state == STROBE_CAPTURE_ATTACH_EARLIER)
    for (uint32_t i = 0; i < r->natt; i++)
      if (r->att[i].id == a->resource && r->att[i].bytes) {
        bytes = r->att[i].bytes;
        size = r->att[i].size;
      }
  if (!bytes && a->state == STROBE_CAPTURE_ATTACH_EARLIER) {
    const strobe_replay_resource *x = found(r, a->resource);
    if (x) {
      bytes = x->bytes;
      size = x->size;
    }
  }
  int rc = fill(&r->att[r->natt], a, bytes, size);
  if (rc) return rc;
  r->natt++;
  return 0;
}

int strobe_replay_open(const char *path, uint64_t frame, strobe_replay **out) {
  return strobe_replay_open_deep(path, frame, 0, out);
}

int strobe_replay_open_deep(const char *path, uint64_t frame, uint64_t seq, strobe_replay **out) {
  if (!out) return STROBE_EINVAL;
  *out = NULL;
  if (!path) return STROBE_EINVAL;
  strobe_replay *r = calloc(1, sizeof *r);
  if (!r) return STROBE_ENOMEM;
  r->seq = seq;
  int rc = read_capture(path, step_find, r, frame, 0);
  if (!rc && !r->calls) rc = STROBE_ENOTFOUND;
  /* Contents are wanted only when referenced, so the second pass holds
   * them and the frame's attachments, never the whole capture's. An
   * attachment stored earlier than the frame's own record is only kept
   * when referenced; screenshots are attached to their frame. */
  if (!rc) rc = read_capture(path, step_contents, r, frame, 1);
  if (rc) {
    strobe_replay_close(r);
    return rc;
  }
  *out = r;
  return 0;
}

static void free_res(strobe_replay_resource *x, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    free((void *)x[i].media_type);
    free((void *)x[i].bytes);
  }
  free(x);
}

void strobe_replay_close(strobe_replay *r) {
  if (!r) return;
  free(r->calls);
  free(r->refs);
  free(r->labels);
  free(r->wanted);
  free_res(r->res, r->nres);
  free_res(r->att, r->natt);
  free(r);
}

const strobe_capture_deep *strobe_replay_query_deep(const strobe_replay *r) { return r ? &r->deep : NULL; }

const strobe_replay_resource *strobe_replay_query_resource(const strobe_replay *r, uint64_t id) {
  return r ? found(r, id) : NULL;
}

const strobe_replay_resource *strobe_replay_query_attachments(const strobe_replay *r, uint32_t *count) {
  if (count) *count = r ? r->natt : 0;
  return r ? r->att : NULL;
}

strobe_replay_status strobe_replay_check_call(const strobe_capture_draw_call *c,
                                              int (*has_content)(void *ctx, uint64_t resource), void *ctx,
                                              const strobe_replay_backend *b) {
  if (!c || !has_content) return STROBE_REPLAY_UNSUPPORTED_KIND;
  if (b && b->supports && !b->supports(b->ctx, c->kind)) return STROBE_REPLAY_UNSUPPORTED_KIND;
  for (uint32_t i = 0; i < c->nrefs; i++)
    if (c->refs[i].role == STROBE_DEEP_GEOMETRY && !has_content(ctx, c->refs[i].resource)) return STROBE_REPLAY_MISSING_GEOMETRY;
  for (uint32_t i = 0; i < c->nrefs; i++)
    if (c->refs[i].role != STROBE_DEEP_GEOMETRY && !has_content(ctx, c->refs[i].resource)) return STROBE_REPLAY_MISSING_TEXTURE;
  for (uint32_t i = 0; i < c->nrefs; i++)
    if (c->refs[i].role == STROBE_DEEP_SURFACE && !c->has_geometry) return STROBE_REPLAY_MISSING_SURFACE_GEOMETRY;
  return STROBE_REPLAY_OK;
}

static int has_found(void *ctx, uint64_t id) { return found(ctx, id) != NULL; }

strobe_replay_status strobe_replay_check(const strobe_replay *r, uint32_t index, const strobe_replay_backend *b) {
  if (!r || index >= r->deep.ncalls) return STROBE_REPLAY_UNSUPPORTED_KIND;
  strobe_replay_status s = strobe_replay_check_call(&r->calls[index], has_found, (void *)r, b);
  /* A content not found may lie past the damage: the call says that, not that the capture lacks it. */
  if (r->damage && (s == STROBE_REPLAY_MISSING_GEOMETRY || s == STROBE_REPLAY_MISSING_TEXTURE))
    s = STROBE_REPLAY_DAMAGED_CONTENT;
  return s;
}

int strobe_replay_query_damage(const strobe_replay *r, uint64_t *at) {
  if (at) *at = r && r->damage ? r->damage_at : 0;
  return r ? r->damage : 0;
}

int strobe_replay_run(const strobe_replay *r, const strobe_replay_backend *b, strobe_replay_status *status) {
  if (!r || !b || !b->draw) return STROBE_EINVAL;
  int not_ok = 0;
  for (uint32_t i = 0; i < r->deep.ncalls; i++) {
    strobe_replay_status s = strobe_replay_check(r, i, b);
    if (status) status[i] = s;
    if (s != STROBE_REPLAY_OK) {
      not_ok++;
      continue;
    }
    const strobe_capture_draw_call *c = &r->calls[i];
    const strobe_replay_resource *res[STROBE_DEEP_MAX_REFS];
    for (uint32_t j = 0; j < c->nrefs; j++) res[j] = found(r, c->refs[j].resource);
    int rc = b->draw(b->ctx, c, res);
    if (rc < 0) return rc;
  }
  return not_ok;
}
