/*
 * check.h — kept while tests move onto the harness: the check macros now
 * live in tests/support/harness.h (CHECK records and goes on, REQUIRE stops
 * the case). Include that instead; this file must never grow checks of its
 * own.
 */
#ifndef STROBE_TESTS_CHECK_H
#define STROBE_TESTS_CHECK_H
#include "support/harness.h"
#endif
