/*
 * export_html.c — `strobe export FILE --format html -o report.html`: the web
 * viewer and one capture's data in one self-contained HTML file that opens
 * from disk, with no server, no token and no network (docs/viewer.md §One
 * file). It builds the viewer's model of the capture (src/viewer/, what
 * `strobe view` serves), packs the answers the viewer would fetch from
 * /api/capture/... (state, meta, every table, every kept image, the
 * frames' excess and the slowest frames' explanations) and the
 * viewer's own modules (the files libstrobe_server embeds,
 * server/viewer_assets.h) into one gzip stream, and writes it base64 inside
 * a page whose loader (viewer/standalone.js) unpacks it in the browser and
 * whose api.js answers the viewer's requests from it.
 *
 * Must never: write a page that can reach the network (its
 * Content-Security-Policy allows no connection and no remote anything), put
 * unescaped capture text into the HTML (only base64 and HTML-escaped labels
 * go in), or write a partial page without saying the export failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "strobe/explain.h"
#include "strobe/viewer.h"

#include "export.h"

#ifndef STROBE_CLI_HAVE_SERVER
int export_html(const char *path, const char *out, uint32_t max_spans, export_html_result *res) {
  (void)path, (void)out, (void)max_spans, (void)res;
  cli_error("export", "--format html needs the viewer, and this strobe was built without libstrobe_server "
                     "(libmicrohttpd and jansson)");
  return CLI_FAIL;
}
#else

#include "format/json_writer.h"
#include "server/viewer_assets.h"
#include "viewer/viewer_model.h"

#define HX_EXPLAINED 24  /* the slowest frames a report explains (the detail panel asks for one frame at a time) */
#define HX_MAX_FILES 128 /* viewer modules (about 40) + state, meta, 12 tables, 16 images, 1 + HX_EXPLAINED explanations */

typedef struct hx_file {
  char name[64];      /* "app.js", or an /api path: "/api/capture/table/spans" */
  const void *data;
  size_t len;
  size_t xor8_at;     /* with xor8_rows: the offset of an f64 column stored as xor8 (xor8_copy) */
  uint32_t xor8_rows; /* its values; 0: the file is stored as it is */
} hx_file;

typedef struct hx_bundle {
  hx_file files[HX_MAX_FILES];
  uint32_t n;
  unsigned char *starts; /* the spans table with its start column as xor8, malloc'd (xor8_copy) */
  char *explained[HX_EXPLAINED + 1]; /* the explanations' JSON, malloc'd */
  uint32_t nexplained;
} hx_bundle;

static const strobe__asset *asset(const char *path) {
  for (size_t i = 0; i < strobe__viewer_asset_count; i++)
    if (!strcmp(strobe__viewer_assets[i].path, path)) return &strobe__viewer_assets[i];
  return NULL;
}

/* 0, or -1 when the bundle is full (a viewer of more modules than HX_MAX_FILES allows for: refused, not cut). */
static int add(hx_bundle *b, const char *name, const void *data, size_t len) {
  if (b->n == HX_MAX_FILES) return -1;
  hx_file *f = &b->files[b->n++];
  snprintf(f->name, sizeof f->name, "%s", name);
  f->data = data;
  f->len = len;
  f->xor8_at = 0;
  f->xor8_rows = 0;
  return 0;
}

/* What /api/capture/state answers for a file shown by `strobe view`, marked a report. */
static void state_json(strobe__buf *out) {
  strobe__json j = {0};
  strobe__json_object(&j, NULL);
  strobe__json_str(&j, "show", "file");
  strobe__json_bool(&j, "recording", 0);
  strobe__json_bool(&j, "building", 0);
  strobe__json_uint(&j, "generation", 1);
  strobe__json_bool(&j, "has_capture", 1);
  strobe__json_bool(&j, "has_compare", 0);
  strobe__json_null(&j, "last_error");
  strobe__json_bool(&j, "report", 1);
  strobe__json_bool(&j, "explainable", 1); /* its slowest frames: add_explanations */
  strobe__json_end(&j);
  *out = j.out;
}

/* The index standalone.js reads first: each file's [name, offset, length]. */
static void index_json(const hx_bundle *b, strobe__buf *out) {
  strobe__json j = {0};
  strobe__json_object(&j, NULL);
  strobe__json_uint(&j, "format", 1);
  strobe__json_array(&j, "files");
  size_t off = 0;
  for (uint32_t i = 0; i < b->n; i++) {
    strobe__json_array(&j, NULL);
    strobe__json_str(&j, NULL, b->files[i].name);
    strobe__json_uint(&j, NULL, off);
    strobe__json_uint(&j, NULL, b->files[i].len);
    if (b->files[i].xor8_rows) { /* ["xor8", column offset, rows]: standalone.js undoes it */
      strobe__json_str(&j, NULL, "xor8");
      strobe__json_uint(&j, NULL, b->files[i].xor8_at);
      strobe__json_uint(&j, NULL, b->files[i].xor8_rows);
    }
    strobe__json_end(&j);
    off += b->files[i].len;
  }
  strobe__json_end(&j);
  strobe__json_end(&j);
  *out = j.out;
}

static int deflate_into(z_stream *z, strobe__buf *out, const void *data, size_t len, int flush) {
  z->next_in = (Bytef *)(uintptr_t)data;
  z->avail_in = (uInt)len;
  do {
    if (strobe__buf_reserve(out, 1u << 16)) return -1;
    z->next_out = out->data + out->len;
    z->avail_out = (uInt)(out->cap - out->len);
    int rc = deflate(z, flush);
    if (rc == Z_STREAM_ERROR) return -1;
    out->len = out->cap - z->avail_out;
    if (rc == Z_STREAM_END) return 0;
  } while (z->avail_in || (flush == Z_FINISH));
  return 0;
}

/* The bundle as one gzip stream: u32 (LE) index length, the index, the files back to back. */
static int pack(const hx_bundle *b, const strobe__buf *index, strobe__buf *out) {
  z_stream z = {0};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
  unsigned char hdr[4] = {(unsigned char)index->len, (unsigned char)(index->len >> 8),
                          (unsigned char)(index->len >> 16), (unsigned char)(index->len >> 24)};
  int rc = deflate_into(&z, out, hdr, 4, Z_NO_FLUSH);
  if (!rc) rc = deflate_into(&z, out, index->data, index->len, Z_NO_FLUSH);
  for (uint32_t i = 0; !rc && i < b->n; i++) rc = deflate_into(&z, out, b->files[i].data, b->files[i].len, Z_NO_FLUSH);
  if (!rc) rc = deflate_into(&z, out, NULL, 0, Z_FINISH);
  deflateEnd(&z);
  return rc;
}

static void put(strobe__buf *f, const char *s) { strobe__buf_put(f, s, strlen(s)); }

static void base64(strobe__buf *f, const unsigned char *p, size_t n) {
  static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (strobe__buf_reserve(f, (n + 2) / 3 * 4)) return;
  char *o = (char *)f->data + f->len;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    *o++ = k[v >> 18 & 63];
    *o++ = k[v >> 12 & 63];
    *o++ = i + 1 < n ? k[v >> 6 & 63] : '=';
    *o++ = i + 2 < n ? k[v & 63] : '=';
  }
  f->len = (size_t)((unsigned char *)o - f->data);
}

static void html_text(strobe__buf *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': put(f, "&amp;"); break;
      case '<': put(f, "&lt;"); break;
      case '>': put(f, "&gt;"); break;
      case '"': put(f, "&quot;"); break;
      default: strobe__buf_put(f, s, 1);
    }
  }
}

/* The part of index.html between <body> and </body>: the viewer's panels. */
static int body_of(const strobe__asset *index, const char **p, size_t *n) {
  const char *s = (const char *)index->data;
  const char *a = strstr(s, "<body>"), *z = strstr(s, "</body>");
  if (!a || !z || z < a) return -1;
  *p = a + 6;
  *n = (size_t)(z - *p);
  return 0;
}

/* The page: its policy, the stylesheet, the data block, the panels and the loader last. */
static int write_page(strobe__buf *f, const char *label, const strobe__buf *packed) {
  const strobe__asset *css = asset("/viewer.css"), *loader = asset("/standalone.js"), *index = asset("/index.html"),
                      *icon = asset("/favicon.svg");
  const char *body;
  size_t body_len;
  if (!css || !loader || !index || body_of(index, &body, &body_len)) return -1;
  /* Inlined as they are: neither may close its element early. */
  if (strstr((const char *)css->data, "</style") || strstr((const char *)loader->data, "</script")) return -1;
  put(f, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' blob:; "
        "style-src 'unsafe-inline'; img-src blob: data:; connect-src 'none'; base-uri 'none'; form-action 'none'\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
  html_text(f, label);
  put(f, " · Strobe report</title>\n");
  if (icon) {
    put(f, "<link rel=\"icon\" type=\"image/svg+xml\" href=\"data:image/svg+xml;base64,");
    base64(f, icon->data, icon->len);
    put(f, "\">\n");
  }
  put(f, "<style>\n");
  strobe__buf_put(f, css->data, css->len);
  put(f, "</style>\n<script type=\"application/octet-stream\" id=\"strobe-report-data\">");
  base64(f, packed->data, packed->len);
  put(f, "</script>\n</head>\n<body>");
  strobe__buf_put(f, body, body_len);
  put(f, "<script>\n");
  strobe__buf_put(f, loader->data, loader->len);
  put(f, "</script>\n</body>\n</html>\n");
  return 0;
}

/* xor8: the spans' start column (f64 ns, ascending within each lane row, so neighbours share their high
 * bits) stored as each value's bits XOR the previous one's, the 8 bytes of every value then in 8 planes
 * (all first bytes, all second bytes...): gzip leaves the demo's spans table at 800 KB instead of 920 KB.
 * A malloc'd copy of the table (the model stays as built), or NULL when out of memory. */
static unsigned char *xor8_copy(const strobe__vtable *t, size_t at) {
  unsigned char *out = malloc(t->bytes ? t->bytes : 1);
  uint64_t *v = malloc(((size_t)t->rows + 1) * sizeof *v);
  if (!out || !v) {
    free(out);
    free(v);
    return NULL;
  }
  memcpy(out, t->data, t->bytes);
  memcpy(v, t->data + at, (size_t)t->rows * 8);
  for (uint32_t i = t->rows; i-- > 1;) v[i] ^= v[i - 1];
  for (uint32_t i = 0; i < t->rows; i++)
    for (int k = 0; k < 8; k++) out[at + (size_t)k * t->rows + i] = (unsigned char)(v[i] >> (8 * k)); /* little-endian */
  free(v);
  return out;
}

/* The viewer's modules, then the /api answers of one model. 0, or -1 when they do not all fit. */
static int collect(hx_bundle *b, const strobe__vmodel *m, const strobe__buf *state) {
  int rc = 0;
  for (size_t i = 0; i < strobe__viewer_asset_count; i++) {
    const strobe__asset *a = &strobe__viewer_assets[i];
    size_t n = strlen(a->path);
    if (n > 3 && !strcmp(a->path + n - 3, ".js") && strcmp(a->path, "/standalone.js") != 0)
      rc |= add(b, a->path + 1, a->data, a->len);
  }
  char name[64];
  rc |= add(b, "/api/capture/state", state->data, state->len);
  rc |= add(b, "/api/capture/meta", m->meta, m->meta_len);
  for (int t = 0; t < STROBE__VT_COUNT; t++) {
    if (!m->tables[t].bytes) continue;
    snprintf(name, sizeof name, "/api/capture/table/%s", m->tables[t].name);
    const strobe__vtable *tab = &m->tables[t];
    if (t == STROBE__VT_SPANS && tab->rows > 1 && !strcmp(tab->cols[0].name, "start") && (b->starts = xor8_copy(tab, tab->cols[0].offset))) {
      rc |= add(b, name, b->starts, tab->bytes);
      if (!rc) b->files[b->n - 1].xor8_at = tab->cols[0].offset, b->files[b->n - 1].xor8_rows = tab->rows;
    } else {
      rc |= add(b, name, tab->data, tab->bytes);
    }
  }
  for (uint32_t k = 0; k < m->nblobs; k++) {
    snprintf(name, sizeof name, "/api/capture/image/%u", k);
    rc |= add(b, name, m->blobs[k].data, m->blobs[k].len);
  }
  return rc;
}

/* What the viewer asks /api/capture/explain (docs/viewer.md §Explanation), keyed by the exact query it sends
 * (api.js keeps that endpoint's query): every frame's excess over its norm (?excess=1, the frame list's sort) and
 * the HX_EXPLAINED slowest frames' explanations with run-time names (a local file, like the viewer's). Other
 * frames' panels say the report holds none. A capture the explainer refuses adds nothing. 0, or -1: bundle full. */
static int add_explanations(hx_bundle *b, const char *path) {
  strobe_explain *e = NULL;
  if (strobe_explain_open(path, NULL, &e)) return 0;
  const strobe_frames *fx = strobe_explain_query_frames(e);
  uint32_t n = strobe_frames_query_count(fx), slow[HX_EXPLAINED];
  double *excess = malloc(((size_t)n + 1) * sizeof *excess);
  int rc = 0;
  strobe__json j = {0};
  if (excess && strobe_explain_excess(e, excess) == 0) {
    strobe__json_object(&j, NULL);
    strobe__json_array(&j, "frames");
    for (uint32_t i = 0; i < n; i++) {
      const strobe_frame *f = strobe_frames_query_frame(fx, i);
      if (isnan(excess[i])) continue;
      strobe__json_array(&j, NULL);
      strobe__json_str(&j, NULL, f->kind ? strobe_op_kind_name(f->kind) : "frame");
      strobe__json_uint(&j, NULL, f->number);
      strobe__json_uint(&j, NULL, f->thread);
      strobe__json_num(&j, NULL, excess[i], 0);
      strobe__json_end(&j);
    }
    strobe__json_end(&j);
    strobe__json_end(&j);
    if (!j.out.failed && (b->explained[b->nexplained] = malloc(j.out.len + 1))) {
      memcpy(b->explained[b->nexplained], j.out.data, j.out.len);
      rc |= add(b, "/api/capture/explain?excess=1", b->explained[b->nexplained++], j.out.len);
    }
  }
  strobe__buf_free(&j.out);
  free(excess);
  uint32_t k = strobe_explain_slowest(e, HX_EXPLAINED, slow);
  for (uint32_t i = 0; i < k && !rc; i++) {
    char *json = NULL, name[64];
    size_t len = 0;
    if (strobe_explain_json(e, &slow[i], 1, STROBE_EXPLAIN_JSON_CONTENT, &json, &len)) continue;
    const strobe_frame *f = strobe_frames_query_frame(fx, slow[i]);
    snprintf(name, sizeof name, "/api/capture/explain?number=%llu&thread=%u", (unsigned long long)f->number, f->thread);
    b->explained[b->nexplained++] = json;
    rc |= add(b, name, json, len);
  }
  strobe_explain_destroy(e);
  return rc;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* One report of the capture with at most max_spans spans, into page. CLI_OK, or an exit code after a message. */
static int build_page(const char *path, uint32_t max_spans, strobe__buf *page, export_html_result *res) {
  strobe__vsource src = {.path = path, .label = base_name(path), .origin = "file"};
  strobe__vmodel *m = NULL;
  int rc = strobe__vmodel_build(&src, max_spans, 1, &m);
  if (rc) {
    cli_error("export", "%s: cannot build the viewer's model: %s", path, strobe_strerror(rc));
    return CLI_FAIL;
  }
  hx_bundle *b = calloc(1, sizeof *b);
  strobe__buf state = {0}, index = {0}, packed = {0};
  int status = CLI_FAIL;
  if (!b) {
    cli_error("export", "out of memory packing the report");
    goto done;
  }
  state_json(&state);
  if (collect(b, m, &state) || add_explanations(b, path)) {
    cli_error("export", "the report holds at most %d files (the viewer's modules and the capture's answers): this viewer has more",
              HX_MAX_FILES);
    goto done;
  }
  index_json(b, &index);
  if (state.failed || index.failed || pack(b, &index, &packed)) {
    cli_error("export", "out of memory packing the report");
    goto done;
  }
  if (write_page(page, src.label, &packed)) {
    cli_error("export", "this strobe's embedded viewer files cannot make a report (index.html, viewer.css, standalone.js)");
    goto done;
  }
  if (page->failed) {
    cli_error("export", "out of memory writing the report");
    goto done;
  }
  res->spans = m->spans;
  res->spans_cut = m->spans_cut;
  res->frames = m->frames;
  res->bytes = page->len;
  status = CLI_OK;
done:
  strobe__buf_free(&state);
  strobe__buf_free(&index);
  strobe__buf_free(&packed);
  if (b) {
    free(b->starts);
    for (uint32_t i = 0; i < b->nexplained; i++) free(b->explained[i]);
  }
  free(b);
  strobe__vmodel_release(m);
  return status;
}

int export_html(const char *path, const char *out, uint32_t max_spans, export_html_result *res) {
  strobe__buf page = {0};
  int rc = build_page(path, max_spans, &page, res);
  if (!rc) {
    cli_output w;
    if (!(rc = cli_output_open(&w, "export", out))) {
      fwrite(page.data, 1, page.len, w.f); /* a failed write is ferror, which cli_output_close reports */
      rc = cli_output_close(&w);
    }
  }
  strobe__buf_free(&page);
  return rc;
}

#endif
