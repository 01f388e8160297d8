/*
 * capture_reader.h — what capture_reader.c offers besides the public reader
 * (include/strobe/capture.h): the check of the invariants every record it
 * returns keeps (docs/invariants.md §Data the reader returns).
 *
 * Must never: be used to validate input. A capture is hostile and its
 * defects are error codes (STROBE_ECORRUPT, STROBE_ERANGE); these are the
 * reader's own promises, whose breach is a bug in the reader.
 */
#ifndef STROBE_FORMAT_CAPTURE_READER_H
#define STROBE_FORMAT_CAPTURE_READER_H

#include "strobe/capture.h"

/* Asserts (STROBE_ASSERT, platform/invariant.h) what the reader promises of
 * a record it returns from c: a known type; BEGIN and END at depth 1 or more
 * on a defined thread with a defined site; operation, device, tree, sample,
 * attachment and deep records with their object; a tree in preorder (the
 * first node a root, each next at most one deeper) with its props where its
 * counts say; a deep capture's calls numbered in order, within their bounds,
 * each reference to a resource (never 0) in a known role. strobe_capture_next
 * and strobe_capture_next_batch call it on every record in checking builds;
 * elsewhere it checks nothing. */
void strobe__capture_check_record(const strobe_capture *c, const strobe_capture_record *r);

#endif
