/*
 * frames_view.h — how the CLI shows the frame model (strobe/frames.h,
 * docs/frames.md): the same labels, tallies, frame lists and stage rows in
 * every command that shows frames (report, info, diff --frames, tree,
 * calls), text and JSON alike. It presents; it never decides what a frame
 * is, which state it is in or which spans are its own: the library does.
 */
#ifndef STROBE_CLI_FRAMES_VIEW_H
#define STROBE_CLI_FRAMES_VIEW_H

#include <stdint.h>
#include <stdio.h>

#include "format/json_writer.h"
#include "strobe/capture.h"
#include "strobe/frames.h"

/* Builds the frame model of the capture file at path through the CLI's reader (its progress bar, and its words
 * for a bad or damaged file, as `cmd`): a first read feeds strobe_frames_add, and with `spans` a second counts
 * each frame's own spans (strobe_frames_count_span). Returns CLI_OK with *out set and *read_status from the first
 * read's cli_finish_read (a damaged file: CLI_FAIL, and the model of what was read), or the exit code of an
 * input that could not be opened (*out NULL). */
int cli_frames_read(const char *cmd, const char *path, int quiet, int spans, strobe_frames **out, int *read_status);

/* The key of a source in JSON ("pass_operations", "marks", "top_level_scopes", "none") and its definition. */
const char *fv_source_key(uint32_t source);
const char *fv_source_text(uint32_t source);

/* A series' label: its window ("main"; "screen/main" when the capture holds several processes) or its thread. */
const char *fv_series_label(const strobe_frames *fx, const strobe_capture *c, uint32_t series, char *buf, size_t cap);
/* A process label for a column: "" when the capture holds one process. */
const char *fv_process(const strobe_frames *fx, uint32_t process);

/* Operations by kind and by state, those without detail; passes only in by_state. */
typedef struct fv_tally {
  uint64_t by_kind[STROBE_OP_KIND_LIMIT];
  uint64_t by_state[STROBE_FRAME_STATE_LIMIT];
  uint64_t passes, without_detail;
} fv_tally;
fv_tally fv_tally_of(const strobe_frames *fx);

/* The frames section: source, series with both rates, the passes by state, the slowest `top`. */
void fv_frames_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c, double start_ns, uint32_t top);
void fv_frames_text(FILE *f, const strobe_frames *fx, const strobe_capture *c, double start_ns, uint32_t top);

/* Stage rows per (stage, run-time parent, process); `included` (NULL: all) says which stage site ids to show. */
typedef int (*fv_site_filter)(const void *ctx, uint32_t site);
void fv_stages_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c, fv_site_filter keep,
                    const void *ctx);
void fv_stages_text(FILE *f, const strobe_frames *fx, const strobe_capture *c, fv_site_filter keep, const void *ctx);

/* Every frame: number, kind, state, series, processes, thread, start, duration, own spans, stages (info --frames). */
void fv_frame_list_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c, double start_ns);
void fv_frame_list_text(FILE *f, const strobe_frames *fx, const strobe_capture *c, double start_ns);
/* The source, operations by kind (one each) and every series with its states and rates (info). */
void fv_series_summary_json(strobe__json *j, const strobe_frames *fx, const strobe_capture *c);
void fv_series_summary_text(FILE *f, const strobe_frames *fx, const strobe_capture *c);

#endif
