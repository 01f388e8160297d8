/*
 * samples.h — what `strobe report` says about the sampler
 * (docs/exploration.md §Sampling): the hot functions of the capture's
 * samples (--samples: self and inclusive), and each scope site's wall time
 * split into on-CPU and off-CPU (blocked or preempted) where context
 * switches cover its scopes. The split reads the capture a second time
 * (switches of a scope may be written after its END), so it needs a file.
 */
#ifndef STROBE_CLI_SAMPLES_H
#define STROBE_CLI_SAMPLES_H

#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"
#include "analyze/samples.h"
#include "format/json_writer.h"

typedef struct cpu_split {
  uint64_t covered;     /* scopes wholly inside the switches' coverage */
  uint64_t scopes;      /* scopes of the site in all */
  double wall_ns;       /* of the covered scopes */
  double off_ns;        /* off-CPU inside them */
  double blocked_ns;    /* of it, blocked (asleep, waiting); the rest preempted */
} cpu_split;

typedef struct samples_report {
  cpu_split *sites;     /* by site id; NULL when no split was made */
  uint32_t n_sites;
  const char *why;      /* why there is no split; NULL when there is one */
  int failed;
} samples_report;

/* Second pass over `path` for the split (see above). Returns CLI_OK or the
 * exit code of a failed open. */
int samples_split(samples_report *sr, agg *a, const strobe_capture *c, const char *path, int is_stdin);
void samples_report_free(samples_report *sr);
/* Text: the split's section, then (`functions` > 0) the top functions. */
void samples_text(FILE *f, const samples_report *sr, agg *a, const strobe_capture *c, const uint32_t *ids,
                  uint32_t n_ids, uint32_t functions);
/* JSON: keys "cpu_split" and (functions > 0) "samples", inside the open object. */
void samples_json(strobe__json *j, const samples_report *sr, agg *a, const strobe_capture *c, const uint32_t *ids,
                  uint32_t n_ids, uint32_t functions);

#endif
