/*
 * strobe.hpp — C++ RAII wrappers over strobe.h for compilers or code bases
 * that prefer destructors to the cleanup attribute. Same cost and thread
 * rules as strobe.h; header-only.
 *
 *   void draw() {
 *     STROBE_CXX_SCOPE("draw");           // ends when draw() returns or throws
 *     for (auto &row : rows) {
 *       STROBE_CXX_CUMULATIVE("row");     // one aggregate entry per enclosing scope
 *       paint(row);
 *     }
 *   }
 */
#ifndef STROBE_STROBE_HPP
#define STROBE_STROBE_HPP

#include "strobe/strobe.h"

namespace strobe {

/* A scope open for the lifetime of the object. Not copyable or movable: a
 * scope belongs to the thread and block that opened it. */
class Scope {
 public:
  /* always_inline: the frame records this C frame's stack pointer (strobe.h). */
  __attribute__((always_inline)) explicit Scope(strobe_site *site) noexcept : guard_(strobe__is_active() ? strobe__begin(site) : 0u) {}
  ~Scope() { strobe__scope_cleanup(&guard_); }
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;

 private:
  uintptr_t guard_;
};

/* One iteration of a loop body, aggregated into its enclosing scope. */
class Cumulative {
 public:
  explicit Cumulative(strobe_site *site) noexcept
      : guard_{strobe__is_active() ? site : nullptr, strobe__is_active() ? strobe__now() : 0u} {}
  ~Cumulative() { strobe__cumulative_cleanup(&guard_); }
  Cumulative(const Cumulative &) = delete;
  Cumulative &operator=(const Cumulative &) = delete;

 private:
  strobe__cumulative_guard guard_;
};

}  // namespace strobe

#if defined(STROBE_DISABLE)
#define STROBE_CXX_SCOPE(name) ((void)0)
#define STROBE_CXX_CUMULATIVE(name) ((void)0)
#else
#define STROBE_CXX_SCOPE(name)                                                    \
  STROBE__SITE(STROBE__UNIQUE(strobe__site_), STROBE_SITE_SCOPE, name, nullptr); \
  ::strobe::Scope STROBE__UNIQUE(strobe__scope_)(&STROBE__UNIQUE(strobe__site_))
#define STROBE_CXX_CUMULATIVE(name)                                                    \
  STROBE__SITE(STROBE__UNIQUE(strobe__site_), STROBE_SITE_CUMULATIVE, name, nullptr); \
  ::strobe::Cumulative STROBE__UNIQUE(strobe__cum_)(&STROBE__UNIQUE(strobe__site_))
#endif

#endif
