/*
 * label.c — the label registry: gives each distinct short text that an
 * operation event names (a window id, an operation counter's name) a small
 * integer id, so ring events and capture streams carry the id and the text
 * is written once per consumer (docs/capture-format.md, LABELS block).
 *
 * Owns: a copy of every label (window ids are not static storage), the
 * content-hashed index, and the count the drain delivers up to.
 * Must never: grow past STROBE__MAX_LABELS (labels past it are counted and
 * get id 0, which every consumer shows as "no label"), or be called on the
 * inline hot path (operations call it, once per operation or counter).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "platform/invariant.h"
#include "probe/probe.h"

#define HASH_SLOTS (2u * STROBE__MAX_LABELS) /* open addressing, at most half full */

static char *g_text[STROBE__MAX_LABELS]; /* [0] unused: id 0 means "no label" */
static uint32_t g_count = 1;
static uint16_t g_index[HASH_SLOTS];     /* label ids by hash of their text; 0 = empty */
static uint64_t g_refused;
static strobe__mutex g_lock = STROBE__MUTEX_INIT;

static uint32_t hash(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

uint32_t strobe__label_id(const char *text) {
  if (!text || !text[0]) return 0;
  size_t n = strnlen(text, STROBE__MAX_LABEL_BYTES + 1);
  if (n > STROBE__MAX_LABEL_BYTES) n = STROBE__MAX_LABEL_BYTES;
  uint32_t slot = hash(text, n) % HASH_SLOTS;
  uint32_t id = 0;
  strobe__mutex_lock(&g_lock);
  for (;; slot = (slot + 1) % HASH_SLOTS) {
    uint32_t k = g_index[slot];
    if (!k) break;
    if (!strncmp(g_text[k], text, n) && g_text[k][n] == '\0') {
      id = k;
      goto out;
    }
  }
  char *copy = g_count < STROBE__MAX_LABELS ? malloc(n + 1) : NULL;
  if (!copy) {
    g_refused++;
    goto out;
  }
  memcpy(copy, text, n);
  copy[n] = '\0';
  id = g_count;
  g_text[id] = copy;
  g_index[slot] = (uint16_t)id;
  __atomic_store_n(&g_count, id + 1, __ATOMIC_RELEASE);
out:
  strobe__mutex_unlock(&g_lock);
  return id;
}

uint32_t strobe__label_count(void) { return __atomic_load_n(&g_count, __ATOMIC_ACQUIRE); }

const char *strobe__label_get(uint32_t id) { return id > 0 && id < strobe__label_count() ? g_text[id] : NULL; }

uint64_t strobe__labels_refused(void) {
  strobe__mutex_lock(&g_lock);
  uint64_t n = g_refused;
  strobe__mutex_unlock(&g_lock);
  return n;
}

/* >>rule (docs/sessions.md §The label rule) */
static int name_char(unsigned char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

size_t strobe__label_rule_len(const char *s, size_t max, int window_chars) {
  if (!s) return 0;
  size_t n = 0;
  for (; s[n]; n++) {
    unsigned char ch = (unsigned char)s[n];
    int ok = name_char(ch) || (window_chars && (ch == '.' || ch == '/' || ch == ':' || ch == '-'));
    if (n == max || !ok) return 0;
  }
  return n;
}

/* probe.h >>fork: the registry is whole whenever its lock is free. */
void strobe__labels_fork(int phase) {
  if (phase == STROBE__FORK_PREPARE)
    strobe__mutex_lock(&g_lock);
  else
    strobe__mutex_unlock(&g_lock);
}
