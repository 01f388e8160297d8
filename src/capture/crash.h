/*
 * crash.h — the crash record's side of the capture files (crash.c): a
 * recorder hands its file to the crash handler while it records, and
 * brackets each write of its sink so the handler never writes into the
 * middle of a block (docs/recording.md §Crashes).
 */
#ifndef STROBE_CAPTURE_CRASH_H
#define STROBE_CAPTURE_CRASH_H

/* A file the handler may write its CRASH block to, and the word that says whether its sink is writing (1),
 * idle (0) or closed by a crash (2). Installs the handler (once) when strobe_desc.crash_handler is 1; without
 * it, does nothing. At most 8 files at once (more are not watched). Any thread. */
void strobe__crash_watch(int fd, int *sink_state);
/* Forgets the file (before it is closed). Any thread. */
void strobe__crash_unwatch(const int *sink_state);
/* Brackets one sink write: enter returns 1 when the write may go ahead (the state is then 1 until leave), 0
 * when a crash closed the file (nothing may be written after its CRASH block). */
int strobe__crash_sink_enter(int *sink_state);
void strobe__crash_sink_leave(int *sink_state);

#endif
