/*
 * traced.h — the functions of test_calltrace's traced program
 * (tests/calltrace/traced.c and traced_cxx.cpp), callable from the test,
 * which itself is compiled without call tracing.
 */
#ifndef STROBE_TESTS_TRACED_H
#define STROBE_TESTS_TRACED_H

#ifdef __cplusplus
extern "C" {
#endif

int traced_root(int x);             /* leaf_static twice, traced_cxx_entry, traced_excluded_helper */
int traced_excluded_helper(int x);  /* calls leaf_static */
int traced_recurse(int n);          /* n + 1 nested calls of itself */
void traced_loop(unsigned n);       /* n calls of leaf_static */
int traced_cxx_entry(int x);        /* calls calltrace_demo::Shape::area(int) */
int traced_call_back(void (*fn)(void), int x); /* fn(), then leaf_static */

#ifdef __cplusplus
}
#endif

#endif
