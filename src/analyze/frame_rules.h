/*
 * frame_rules.h — the rules of a frame that the capture's frame model
 * (frames.c, docs/frames.md) and the live sessions (src/session/,
 * docs/sessions.md §Frame rate) both apply: an operation's state across
 * processes, and whether a pass counts toward its window's frame rates.
 * One copy, so a capture of a run and the session report of that run
 * cannot disagree on them (test cli_frames_truth_demo compares the two).
 *
 * Owns: those two rules. Must never: read a capture or a session, or hold
 * state; the two sides differ only in what they know (a session sees one
 * process, so none of its operations is abandoned; a merged capture may
 * hold the process an operation was handed to).
 */
#ifndef STROBE_ANALYZE_FRAME_RULES_H
#define STROBE_ANALYZE_FRAME_RULES_H

#include "strobe/frames.h" /* STROBE_FRAME_* */

/* What is known of one operation where its state is decided. */
typedef struct strobe__op_facts {
  int ended;            /* its END is known (a session's operations have all ended) */
  int committed;        /* its END said committed */
  int resumed;          /* resumed here from another process (strobe_op_resume_remote) */
  int handed_off;       /* handed to another process here (strobe_op_hand_off_remote) */
  int peer_holds_it;    /* the process it was handed to is known to have had the chance to resume it (a merged
                         * capture holding that process) and did not: abandoned. Sessions: always 0 */
} strobe__op_facts;

/* Its STROBE_FRAME_* state (docs/frames.md §States). One resumed here and handed on again (a relay) takes the state
 * of its hand-off: its outcome is where it went. */
static inline uint32_t strobe__op_state(const strobe__op_facts *x) {
  if (x->resumed && !x->handed_off) return !x->ended ? STROBE_FRAME_UNFINISHED : x->committed ? STROBE_FRAME_PRESENTED : STROBE_FRAME_SUPERSEDED;
  if (x->handed_off) return x->peer_holds_it ? STROBE_FRAME_ABANDONED : STROBE_FRAME_HANDED_OFF;
  if (!x->ended) return STROBE_FRAME_UNFINISHED;
  return x->committed ? STROBE_FRAME_COMPLETED : STROBE_FRAME_DROPPED;
}

/* Whether a pass in `state` counts toward its window's rates: committed where it ended (completed, presented), or
 * handed to a process whose outcome is elsewhere (handed off); never an idle pass (strobe_op_mark_idle: it had
 * nothing to do, docs/sessions.md §Idle passes). */
static inline int strobe__pass_counts(uint32_t state, int idle) {
  return !idle && (state == STROBE_FRAME_COMPLETED || state == STROBE_FRAME_PRESENTED || state == STROBE_FRAME_HANDED_OFF);
}

#endif
