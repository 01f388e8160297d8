/*
 * fuzz_viewer_model.c — libFuzzer target for the viewer's model builder
 * (src/viewer/viewer_model.c): any bytes, as a capture in memory, go through
 * strobe__vmodel_build, which `strobe view` runs on files it is handed. It
 * must never crash, hang or leak, and a model it returns must keep the
 * promises the browser relies on: every span's depth and site within the
 * lanes and sites the meta describes, spans of a row in start order, every
 * value and loop record pointing at a real span (or none), every span's
 * owning frame a real frames row (or none), every frame's state one the meta
 * names, every stage row's frame a real one, and a meta that is JSON. As in fuzz_capture_reader.c, each input is tried as is and again
 * with every block's CRC recomputed, so mutations reach the decoders.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fix_crcs.h"
#include "format/codec.h"
#include "viewer/viewer_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t col(const strobe__vtable *t, const char *name) {
  for (uint32_t i = 0; i < t->ncols; i++)
    if (!strcmp(t->cols[i].name, name)) return t->cols[i].offset;
  abort();
}

static void build(const uint8_t *data, size_t size) {
  strobe__vsource src = {NULL, data, size, "fuzz", "file"};
  strobe__vmodel *m = NULL;
  if (strobe__vmodel_build(&src, 1000, 1, &m) != 0) {
    if (m) abort(); /* on error nothing is returned */
    return;
  }
  json_t *meta = json_loads(m->meta, 0, NULL);
  if (!meta) abort();
  const strobe__vtable *sp = strobe__vmodel_table(m, "spans");
  if (!sp || sp->rows != m->spans || m->spans > 1000) abort();
  const uint8_t *depth = sp->data + col(sp, "depth");
  const double *start = (const double *)(const void *)(sp->data + col(sp, "start"));
  /* Rows as the meta describes them: each in bounds and in start order. */
  size_t ti;
  json_t *th;
  uint64_t covered = 0;
  json_array_foreach(json_object_get(meta, "threads"), ti, th) {
    size_t di;
    json_t *d;
    json_array_foreach(json_object_get(th, "depths"), di, d) {
      json_int_t dep = json_integer_value(json_array_get(d, 0)), first = json_integer_value(json_array_get(d, 1)),
                 n = json_integer_value(json_array_get(d, 2));
      if (first < 0 || n < 0 || (uint64_t)(first + n) > sp->rows) abort();
      for (json_int_t i = first; i < first + n; i++) {
        if (depth[i] != dep) abort();
        if (i > first && start[i] < start[i - 1]) abort();
      }
      covered += (uint64_t)n;
    }
  }
  if (covered != sp->rows) abort();
  const strobe__vtable *vt = strobe__vmodel_table(m, "values");
  const uint32_t *vspan = (const uint32_t *)(const void *)(vt->data + col(vt, "span"));
  for (uint32_t i = 0; i < vt->rows; i++)
    if (vspan[i] >= sp->rows || (i && vspan[i] < vspan[i - 1])) abort();
  const strobe__vtable *ct = strobe__vmodel_table(m, "cumulative");
  const uint32_t *cspan = (const uint32_t *)(const void *)(ct->data + col(ct, "span"));
  for (uint32_t i = 0; i < ct->rows; i++)
    if (cspan[i] != UINT32_MAX && cspan[i] >= sp->rows) abort();
  /* The frame model's columns: owners, states and stage rows point at what exists. */
  const strobe__vtable *ft = strobe__vmodel_table(m, "frames"), *ot = strobe__vmodel_table(m, "opstages");
  const uint32_t *owner = (const uint32_t *)(const void *)(sp->data + col(sp, "frame"));
  for (uint32_t i = 0; i < sp->rows; i++)
    if (owner[i] != UINT32_MAX && owner[i] >= ft->rows) abort();
  const uint8_t *state = ft->data + col(ft, "state");
  for (uint32_t i = 0; i < ft->rows; i++)
    if (state[i] >= json_array_size(json_object_get(meta, "frame_states"))) abort();
  const uint32_t *oframe = (const uint32_t *)(const void *)(ot->data + col(ot, "frame"));
  for (uint32_t i = 0; i < ot->rows; i++)
    if (oframe[i] >= ft->rows || (i && oframe[i] < oframe[i - 1])) abort();
  json_decref(meta);
  strobe__vmodel_release(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  build(data, size);
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  if (size) memcpy(copy, data, size);
  if (fix_crcs(copy, size)) build(copy, size);
  free(copy);
  return 0;
}
