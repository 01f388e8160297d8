/*
 * _strobe.c — the CPython binding of libstrobe (python/README.md,
 * docs/exploration.md §Python): spans, numbers, loop scopes and call tracing
 * recorded by Python code into the same rings, captures, flight recorder and
 * live streams as the C code of the process, through libstrobe's public API
 * (the headers in include/strobe/) and the macros' inline forms.
 *
 * Owns: the span, cumulative, recorder and flight-recorder types; the
 * window, operation and stage types and the session calls (>>sessions); the
 * cache from Python names and code objects to interned sites, and the stage
 * sites of Python stage names; the profiling hook
 * behind trace_calls and trace_all; the choice of scope stack for the
 * running context (a thread's own, or an asyncio task's fiber: >>contexts);
 * the capture reader the tests and tools use (read_capture).
 *
 * Must never: record a name that is not interned (run-time names are
 * content: strobe_site_intern keeps them out of session reports), but a
 * stage name that follows the label rule (a static label, >>sessions); accept a
 * number that is not an int or a float for a value, call into Python from
 * a state that holds no GIL, or end a scope it did not begin.
 *
 * Thread rule: every entry point runs with the GIL held (the interpreter
 * calls them); the per-thread state below (>>contexts, >>profile) is the
 * calling thread's own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "strobe/capture.h"
#include "strobe/flight.h"
#include "strobe/record.h"
#include "strobe/session.h"
#include "strobe/strobe.h"

/* >>sites: a Python name's interned site, cached per (name, kind). */
static PyObject *g_sites[STROBE_SITE_ELEMENT + 1]; /* dict name -> int (the site's address), per kind */

/* The interned site of `name` (a str) for `kind`, or NULL with an exception
 * set. Interning never fails: a refused name gets the fallback site, which
 * libstrobe counts (intern_invalid, intern_full). */
static strobe_site *site_for(PyObject *name, strobe_site_kind kind, const char *category) {
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "a name is a str, not %.80s", Py_TYPE(name)->tp_name);
    return NULL;
  }
  PyObject *hit = PyDict_GetItemWithError(g_sites[kind], name);
  if (hit) return (strobe_site *)PyLong_AsVoidPtr(hit);
  if (PyErr_Occurred()) return NULL;
  Py_ssize_t len;
  const char *utf8 = PyUnicode_AsUTF8AndSize(name, &len);
  if (!utf8) return NULL;
  strobe_site *site = strobe_site_intern(utf8, (size_t)len, category, kind);
  PyObject *addr = PyLong_FromVoidPtr(site);
  if (!addr) return NULL;
  int rc = PyDict_SetItem(g_sites[kind], name, addr);
  Py_DECREF(addr);
  return rc < 0 ? NULL : site;
}

/* >>contexts
 * Which scope stack Python code records into. Code outside asyncio tasks
 * records into its thread's own stack. Each asyncio task gets a fiber
 * (strobe.h >>fibers) the first time it records, so a task's spans nest
 * under the task wherever it is suspended and resumed, and two tasks
 * interleaving on one thread never close each other's spans. A task is
 * told by its contextvars context (every task step runs in the task's own
 * context): the fiber is kept in a ContextVar, beside the context it was
 * made for, since a task's context starts as a copy of its creator's.
 *
 * The check is one pointer compare while the thread stays in one context;
 * on a change, the ContextVar tells the task's fiber, and only a context
 * never seen asks asyncio for the running task. Switching is lazy: a thread
 * stays in a task's fiber until Python code of another context records, so
 * C scopes recorded between a task's steps by code of no task (the event
 * loop's own, a C extension's callback) land on that task's lane
 * (docs/exploration.md §Python, asyncio). Nothing of this runs while no
 * consumer records: a span then records nothing. */
typedef struct fiber_obj {
  PyObject_HEAD
  PyObject *ctx;      /* the context it was made for (strong: see fiber_traverse) */
  strobe_fiber *fiber;
} fiber_obj;

static PyObject *g_fiber_var;        /* ContextVar "strobe_fiber": a fiber_obj */
static PyObject *g_get_running_loop; /* asyncio.events._get_running_loop, once asyncio is imported */
static PyObject *g_current_task;     /* asyncio.tasks.current_task, likewise */
static PyObject *g_asyncio_events, *g_asyncio_tasks; /* the modules' names */
static uint64_t g_fibers_made, g_fibers_refused;

static _Thread_local PyObject *tls_ctx;       /* the context last decided for (strong), or NULL */
static _Thread_local strobe_fiber *tls_choice; /* its fiber, or NULL: the thread's own stack */
static _Thread_local strobe_fiber **tls_gen_fiber; /* where >>profile keeps the generator fiber it put the thread in */

static void thread_go(void); /* >>steps */

static int fiber_traverse(fiber_obj *self, visitproc visit, void *arg) {
  Py_VISIT(self->ctx);
  return 0;
}
static int fiber_clear(fiber_obj *self) {
  Py_CLEAR(self->ctx);
  return 0;
}
static void fiber_dealloc(fiber_obj *self) {
  PyObject_GC_UnTrack(self);
  if (self->fiber) {
    /* Its context is gone, so no thread decides for it any more; a thread
     * still inside it (lazily) is this one at most. */
    if (strobe_fiber_query_current() == self->fiber) thread_go();
    if (tls_choice == self->fiber) tls_choice = NULL;
    if (strobe_fiber_destroy(self->fiber) != 0) g_fibers_refused++;
  }
  fiber_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}
static PyTypeObject fiber_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe._strobe.Fiber",
    .tp_basicsize = sizeof(fiber_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "An asyncio task's scope stack (internal).",
    .tp_traverse = (traverseproc)fiber_traverse,
    .tp_clear = (inquiry)fiber_clear,
    .tp_dealloc = (destructor)fiber_dealloc,
};

/* The fiber for the running asyncio task of this context, made now if need
 * be; NULL (no exception) outside a task, NULL with an exception on error. */
static strobe_fiber *fiber_decide(PyObject *ctx) {
  PyObject *held = NULL;
  if (PyContextVar_Get(g_fiber_var, NULL, &held) < 0) return NULL;
  if (held && Py_IS_TYPE(held, &fiber_type) && ((fiber_obj *)held)->ctx == ctx) {
    strobe_fiber *f = ((fiber_obj *)held)->fiber;
    Py_DECREF(held);
    return f;
  }
  Py_XDECREF(held);
  if (!g_current_task) {
    /* No task runs before asyncio is imported; the binding never imports it. */
    PyObject *events = PyImport_GetModule(g_asyncio_events), *tasks = PyImport_GetModule(g_asyncio_tasks);
    if (events && tasks) {
      g_get_running_loop = PyObject_GetAttrString(events, "_get_running_loop");
      g_current_task = g_get_running_loop ? PyObject_GetAttrString(tasks, "current_task") : NULL;
      if (!g_current_task) Py_CLEAR(g_get_running_loop);
    }
    Py_XDECREF(events);
    Py_XDECREF(tasks);
    if (!g_current_task) return NULL;
  }
  PyObject *loop = PyObject_CallNoArgs(g_get_running_loop);
  if (!loop) return NULL;
  if (loop == Py_None) {
    Py_DECREF(loop);
    return NULL;
  }
  PyObject *task = PyObject_CallOneArg(g_current_task, loop);
  Py_DECREF(loop);
  if (!task) return NULL;
  if (task == Py_None) {
    Py_DECREF(task);
    return NULL;
  }
  PyObject *name = PyObject_CallMethod(task, "get_name", NULL);
  Py_DECREF(task);
  if (!name) return NULL;
  Py_ssize_t len = 0;
  const char *utf8 = PyUnicode_Check(name) ? PyUnicode_AsUTF8AndSize(name, &len) : NULL;
  char label[64];
  if (!utf8 || len < 1 || memchr(utf8, 0, (size_t)len)) {
    PyErr_Clear();
    utf8 = "task";
    len = 4;
  }
  if (len > 63) len = 63;
  memcpy(label, utf8, (size_t)len);
  Py_DECREF(name);
  strobe_fiber *f = NULL;
  if (strobe_fiber_create(label, (size_t)len, &f) != 0) {
    g_fibers_refused++;
    return NULL; /* out of memory: the task records on its thread's stack */
  }
  fiber_obj *obj = PyObject_GC_New(fiber_obj, &fiber_type);
  if (!obj) {
    (void)strobe_fiber_destroy(f);
    return NULL;
  }
  obj->fiber = f;
  obj->ctx = Py_NewRef(ctx);
  PyObject_GC_Track(obj);
  PyObject *token = PyContextVar_Set(g_fiber_var, (PyObject *)obj);
  Py_DECREF(obj); /* the context keeps it */
  if (!token) return NULL;
  Py_DECREF(token);
  g_fibers_made++;
  return f;
}

/* >>steps: a thread that runs a task's code from its own stack (the event
 * loop's Handle._run under call tracing) opens a "task_step" scope there for
 * as long as it is on the task's fiber, so the loop's frames do not show the
 * task's work as their own self time; the task's lane shows what it was
 * (docs/exploration.md §Python). Only when the thread's innermost open
 * scope is a traced call's: its return ends the step for sure, and without
 * one no frame of the thread's would absorb the task's time (lazy switching
 * gives no other clear end). */
static strobe_site g_task_step_site = {"task_step", "python", NULL, __FILE__, "fiber_go", __LINE__,
                                       STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
static _Thread_local int tls_task_marker; /* a task_step scope is open on the thread's own stack */
static int hook_here(void);          /* >>profile: a traced call on this thread's stack runs the step */
static int is_gen_fiber(strobe_fiber *f); /* >>profile: one of the generator fibers */
static int begin_site(strobe_site *site); /* >>profile */

/* Back on the thread's own stack: its task_step scope ends. */
static void thread_back(void) {
  if (!tls_task_marker || strobe_fiber_query_current()) return;
  tls_task_marker = 0;
  if (strobe_thread_query_scope() == &g_task_step_site) STROBE_END();
}

/* The thread onto its own stack. */
static void thread_go(void) {
  if (strobe_fiber_query_current()) (void)strobe_fiber_leave();
  thread_back();
}

/* The thread into fiber f (not NULL): 0, or -1 when another thread holds it. */
static int fiber_go(strobe_fiber *f) {
  strobe_fiber *now = strobe_fiber_query_current();
  if (now == f) return 0;
  if (!now && !tls_task_marker && !is_gen_fiber(f) && hook_here() && strobe__is_active())
    tls_task_marker = begin_site(&g_task_step_site);
  if (strobe_fiber_enter(f) == 0) return 0;
  thread_back(); /* still on the thread's stack (or on `now`): a step that never began ends */
  return -1;
}

/* Puts the calling thread on the scope stack of the running context.
 * Returns 0, or -1 with an exception set. */
static int context_enter(void) {
  /* A generator the hook follows records on its own fiber (>>profile). */
  if (tls_gen_fiber && *tls_gen_fiber && strobe_fiber_query_current() == *tls_gen_fiber) return 0;
  PyObject *ctx = PyThreadState_Get()->context;
  if (ctx != tls_ctx) {
    strobe_fiber *f = ctx ? fiber_decide(ctx) : NULL;
    if (PyErr_Occurred()) return -1;
    Py_XINCREF(ctx);
    Py_XSETREF(tls_ctx, ctx);
    tls_choice = f;
  }
  strobe_fiber *now = strobe_fiber_query_current();
  if (now == tls_choice) return 0;
  if (!tls_choice) {
    thread_go(); /* back to the thread's own stack */
    return 0;
  }
  if (fiber_go(tls_choice) != 0) {
    /* Held by another thread (a context run on two threads in turn): this
     * thread records on its own stack rather than wait. */
    g_fibers_refused++;
    thread_go();
    tls_choice = NULL;
  }
  return 0;
}

/* >>span: `with strobe.span("name"):` and `@strobe.span("name")`. */
typedef struct span_obj {
  PyObject_HEAD
  strobe_site *site;
  PyObject *name;
  strobe_fiber *fiber; /* the scope stack its open scope is on (NULL: the thread's) */
  int depth;           /* 0 while its scope is open; -1 when nothing was begun (or it ended) */
} span_obj;

static PyTypeObject span_type;
static PyObject *g_wrap_span; /* strobe._wrap_span(type, name, fn), from __init__.py: the decorator forms */

static void end_checked(const strobe_site *site); /* >>profile */

static int span_begin(span_obj *self) {
  self->depth = -1;
  if (!strobe__is_active()) return 0;
  if (context_enter() < 0) return -1;
  self->fiber = strobe_fiber_query_current();
  /* STROBE_BEGIN_SITE, keeping what it returns: 0 when no frame was pushed
   * (depth overflow), and then no END is owed. */
  if (strobe__begin_slow(self->site, STROBE__FRAME_EXPLICIT, STROBE__SP_HELD) != 0) self->depth = 0;
  return 0;
}

static void span_end(span_obj *self) {
  if (self->depth < 0) return;
  /* Back on the stack it began on when the running context moved meanwhile
   * (lazy switching may have left this thread elsewhere). */
  strobe_fiber *now = strobe_fiber_query_current();
  if (now != self->fiber) {
    int rc = self->fiber ? fiber_go(self->fiber) : (thread_go(), 0);
    if (rc != 0) {
      self->depth = -1;
      return;
    }
  }
  end_checked(self->site);
  self->depth = -1;
}

static PyObject *span_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"name", NULL};
  PyObject *name;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "U:span", kwlist, &name)) return NULL;
  strobe_site *site = site_for(name, STROBE_SITE_SCOPE, NULL);
  if (!site) return NULL;
  span_obj *self = (span_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->site = site;
  self->name = Py_NewRef(name);
  self->depth = -1;
  return (PyObject *)self;
}

/* strobe.span("name") without building an argument tuple. */
static PyObject *span_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n != 1 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
    PyObject *tuple = PyTuple_New(n);
    if (!tuple) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    PyObject *kw = NULL;
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
      kw = PyDict_New();
      for (Py_ssize_t i = 0; kw && i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) Py_CLEAR(kw);
      if (!kw) {
        Py_DECREF(tuple);
        return NULL;
      }
    }
    PyObject *r = span_new((PyTypeObject *)type, tuple, kw);
    Py_DECREF(tuple);
    Py_XDECREF(kw);
    return r;
  }
  if (!PyUnicode_Check(args[0])) {
    PyErr_Format(PyExc_TypeError, "span() argument 'name' must be str, not %.80s", Py_TYPE(args[0])->tp_name);
    return NULL;
  }
  strobe_site *site = site_for(args[0], STROBE_SITE_SCOPE, NULL);
  if (!site) return NULL;
  span_obj *self = (span_obj *)((PyTypeObject *)type)->tp_alloc((PyTypeObject *)type, 0);
  if (!self) return NULL;
  self->site = site;
  self->name = Py_NewRef(args[0]);
  self->depth = -1;
  return (PyObject *)self;
}

static void span_dealloc(span_obj *self) {
  Py_XDECREF(self->name);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *span_enter(span_obj *self, PyObject *unused) {
  (void)unused;
  if (self->depth >= 0) {
    PyErr_SetString(PyExc_RuntimeError, "this span is already open: make a new strobe.span for each with block");
    return NULL;
  }
  if (span_begin(self) < 0) return NULL;
  return Py_NewRef(self);
}

static PyObject *span_exit(span_obj *self, PyObject *const *args, Py_ssize_t n) {
  (void)args;
  (void)n;
  span_end(self);
  Py_RETURN_FALSE;
}

/* The decorator form: a function whose every call is a span of this name. */

static PyObject *span_call(span_obj *self, PyObject *args, PyObject *kw) {
  PyObject *fn;
  if (kw && PyDict_GET_SIZE(kw)) {
    PyErr_SetString(PyExc_TypeError, "a span decorates one function");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "O:span", &fn)) return NULL;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "a span decorates a callable");
    return NULL;
  }
  if (!g_wrap_span) {
    PyErr_SetString(PyExc_RuntimeError, "strobe is not initialised (import strobe, not strobe._strobe)");
    return NULL;
  }
  return PyObject_CallFunctionObjArgs(g_wrap_span, (PyObject *)Py_TYPE(self), self->name, fn, NULL);
}

static PyMethodDef span_methods[] = {
    {"__enter__", (PyCFunction)span_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))span_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject span_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.span",
    .tp_basicsize = sizeof(span_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "span(name): a scope around a with block, or around every call of a function it decorates.",
    .tp_new = span_new,
    .tp_vectorcall = span_vectorcall,
    .tp_dealloc = (destructor)span_dealloc,
    .tp_call = (ternaryfunc)span_call,
    .tp_methods = span_methods,
};

/* >>cumulative: `with strobe.cumulative("name"):` inside a loop. */
typedef struct cumulative_obj {
  PyObject_HEAD
  strobe__cumulative_guard guard;
  PyObject *name;
  uint64_t count, total, min, max; /* its iterations recorded since made or reset(), in clock ticks */
} cumulative_obj;

static PyObject *cumulative_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"name", NULL};
  PyObject *name;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "U:cumulative", kwlist, &name)) return NULL;
  strobe_site *site = site_for(name, STROBE_SITE_CUMULATIVE, NULL);
  if (!site) return NULL;
  cumulative_obj *self = (cumulative_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->guard.site = site; /* kept here; armed by __enter__ */
  self->name = Py_NewRef(name);
  return (PyObject *)self;
}

static void cumulative_dealloc(cumulative_obj *self) {
  Py_XDECREF(self->name);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *cumulative_enter(cumulative_obj *self, PyObject *unused) {
  (void)unused;
  if (self->guard.t0) {
    PyErr_SetString(PyExc_RuntimeError, "this cumulative is already open (a loop body does not nest in itself)");
    return NULL;
  }
  if (strobe__is_active()) {
    if (context_enter() < 0) return NULL;
    self->guard.t0 = strobe__now();
  }
  return Py_NewRef(self);
}

static PyObject *cumulative_exit(cumulative_obj *self, PyObject *const *args, Py_ssize_t n) {
  (void)args;
  (void)n;
  if (self->guard.t0 && strobe__is_active()) {
    if (context_enter() < 0) return NULL;
    uint64_t t1 = strobe__now(), d = t1 - self->guard.t0;
    strobe__cumulative_add(self->guard.site, self->guard.t0, t1); /* what STROBE_CUMULATIVE's block end does */
    if (!self->count || d < self->min) self->min = d;
    if (d > self->max) self->max = d;
    self->total += d;
    self->count++;
  }
  self->guard.t0 = 0;
  Py_RETURN_FALSE;
}

static PyObject *cumulative_call(cumulative_obj *self, PyObject *args, PyObject *kw) {
  PyObject *fn;
  if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, "O:cumulative", &fn) || !PyCallable_Check(fn)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a cumulative decorates one callable");
    return NULL;
  }
  if (!g_wrap_span) {
    PyErr_SetString(PyExc_RuntimeError, "strobe is not initialised (import strobe, not strobe._strobe)");
    return NULL;
  }
  return PyObject_CallFunctionObjArgs(g_wrap_span, (PyObject *)Py_TYPE(self), self->name, fn, NULL);
}

/* The object's own statistics, in milliseconds (None before its first recorded iteration). */
static PyObject *cumulative_ms(cumulative_obj *self, uint64_t ticks) {
  if (!self->count) Py_RETURN_NONE;
  return PyFloat_FromDouble((double)ticks * strobe_query_clock().ns_per_tick / 1e6);
}
static PyObject *cumulative_get_count(cumulative_obj *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(self->count);
}
static PyObject *cumulative_get_total(cumulative_obj *self, void *c) {
  (void)c;
  return self->count ? cumulative_ms(self, self->total) : PyFloat_FromDouble(0.0);
}
static PyObject *cumulative_get_min(cumulative_obj *self, void *c) {
  (void)c;
  return cumulative_ms(self, self->min);
}
static PyObject *cumulative_get_max(cumulative_obj *self, void *c) {
  (void)c;
  return cumulative_ms(self, self->max);
}
static PyObject *cumulative_get_mean(cumulative_obj *self, void *c) {
  (void)c;
  if (!self->count) Py_RETURN_NONE;
  return PyFloat_FromDouble((double)self->total * strobe_query_clock().ns_per_tick / 1e6 / (double)self->count);
}
static PyObject *cumulative_reset(cumulative_obj *self, PyObject *unused) {
  (void)unused;
  self->count = self->total = self->min = self->max = 0;
  Py_RETURN_NONE;
}

static PyGetSetDef cumulative_getset[] = {
    {"count", (getter)cumulative_get_count, NULL, "Iterations recorded (while a consumer records) since made or reset().", NULL},
    {"total_ms", (getter)cumulative_get_total, NULL, "Their summed duration, ms (0.0 before the first).", NULL},
    {"min_ms", (getter)cumulative_get_min, NULL, "The fastest, ms (None before the first).", NULL},
    {"max_ms", (getter)cumulative_get_max, NULL, "The slowest, ms (None before the first).", NULL},
    {"mean_ms", (getter)cumulative_get_mean, NULL, "total_ms / count (None before the first).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef cumulative_methods[] = {
    {"reset", (PyCFunction)cumulative_reset, METH_NOARGS, "Forgets the object's own statistics (not the capture's)."},
    {"__enter__", (PyCFunction)cumulative_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))cumulative_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject cumulative_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.cumulative",
    .tp_basicsize = sizeof(cumulative_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "cumulative(name): one iteration of a loop body; the enclosing span gets count, total, min, max.",
    .tp_new = cumulative_new,
    .tp_dealloc = (destructor)cumulative_dealloc,
    .tp_call = (ternaryfunc)cumulative_call,
    .tp_methods = cumulative_methods,
    .tp_getset = cumulative_getset,
};

/* >>numbers: strobe.value("rows", 42): numbers only (content rule). */
/* The number of `num` (an int or a float), or -1 with an exception set. */
static int number_of(PyObject *num, double *d) {
  if (PyFloat_Check(num)) {
    *d = PyFloat_AS_DOUBLE(num);
    return 0;
  }
  if (PyLong_Check(num)) {
    *d = PyLong_AsDouble(num);
    return *d == -1.0 && PyErr_Occurred() ? -1 : 0;
  }
  PyErr_Format(PyExc_TypeError, "strobe takes an int or a float for a value (numbers only), not %.80s",
               Py_TYPE(num)->tp_name);
  return -1;
}

/* value(key, number) on the innermost open span of the running context. */
static PyObject *value_record(PyObject *key, PyObject *num) {
  double d;
  if (number_of(num, &d) < 0) return NULL;
  strobe_site *site = site_for(key, STROBE_SITE_VALUE, NULL);
  if (!site) return NULL;
  if (strobe__is_active()) {
    if (context_enter() < 0) return NULL;
    STROBE_VALUE_SITE(site, d);
  }
  Py_RETURN_NONE;
}

static PyObject *py_value(PyObject *mod, PyObject *const *args, Py_ssize_t n) {
  (void)mod;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "value(key, number) takes two arguments");
    return NULL;
  }
  return value_record(args[0], args[1]);
}

/* strobe.current_span(): the innermost open span of the running context (seed
 * 003's current_span().set(name, number)), as a handle that sets numbers on it
 * while it is still the innermost one. */
typedef struct current_obj {
  PyObject_HEAD
  const strobe_site *site; /* NULL: none open, or nothing records */
  strobe_fiber *fiber;     /* the stack it is open on */
} current_obj;

static PyObject *current_set(current_obj *self, PyObject *const *args, Py_ssize_t n) {
  if (n != 2) return PyErr_Format(PyExc_TypeError, "set(name, number) takes two arguments");
  if (self->site && strobe__is_active()) {
    if (context_enter() < 0) return NULL;
    if (strobe_fiber_query_current() != self->fiber || strobe_thread_query_scope() != self->site)
      return PyErr_Format(PyExc_RuntimeError, "strobe: this span is no longer the innermost open one");
  }
  return value_record(args[0], args[1]);
}

static PyObject *current_get_name(current_obj *self, void *c) {
  (void)c;
  if (!self->site) Py_RETURN_NONE;
  return PyUnicode_FromString(self->site->name);
}

static PyMethodDef current_methods[] = {
    {"set", (PyCFunction)(void (*)(void))current_set, METH_FASTCALL,
     "set(name, number): a number (int or float) on this span; RuntimeError when another span opened inside it is "
     "still open. With no span open it is counted (value_without_scope), as strobe.value is."},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef current_getset[] = {
    {"name", (getter)current_get_name, NULL, "The span's name, or None (none open, or nothing records).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PyTypeObject current_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.CurrentSpan",
    .tp_basicsize = sizeof(current_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The innermost open span when strobe.current_span() was called.",
    .tp_methods = current_methods,
    .tp_getset = current_getset,
};

static PyObject *py_current_span(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  current_obj *self = PyObject_New(current_obj, &current_type);
  if (!self) return NULL;
  self->site = NULL;
  self->fiber = NULL;
  if (strobe__is_active()) {
    if (context_enter() < 0) {
      Py_DECREF(self);
      return NULL;
    }
    self->site = strobe_thread_query_scope();
    self->fiber = strobe_fiber_query_current();
  }
  return (PyObject *)self;
}

/* >>profile: trace_calls and trace_all, on the interpreter's profiling hook.
 * Every Python call (a generator's or coroutine's resumption too) is a
 * "call" and a "return" event, paired even when an exception leaves the
 * frame; a call of a traced function begins a scope named after its code
 * object (qualified name, file and first line: two functions of one name
 * stay apart), interned, category "python"; its return ends it. A
 * per-thread stack of call records says what each call began.
 *
 * Suspension (docs/exploration.md §Python): a generator's,
 * coroutine's or async generator's "return" may be a yield or an await, not
 * its end. Its scope then stays open until the frame really ends, so its
 * duration is wall time, and a "suspended" scope covers the time it is
 * away, so that time is never its self time:
 *  - a coroutine is suspended together with its awaiters (an await chain):
 *    its scopes stay on the stack of the chain's driver (an asyncio task's
 *    fiber), and one "suspended" scope opens on top when the chain's
 *    innermost frame suspends and ends when the outermost resumes;
 *  - a generator (and an async generator, and a coroutine that no task
 *    drives) hands control back to a caller that goes on running, so its
 *    scopes (its own and the spans it holds) live on a fiber of its own,
 *    entered at each resumption and left at each suspension; fibers come
 *    from a bounded pool (GEN_FIBERS): past it the generator is recorded a
 *    resumption at a time on its caller's stack and counted
 *    (stats()["resumptions_unfollowed"]).
 * An end that does not close the innermost open scope is never re-paired
 * with another scope: it is counted (stats()["mismatched"]) and the scope
 * left open. */
#define PROFILE_STACK 4096
#define GEN_FIBERS 32 /* generator fibers alive at once (each a fiber ring, docs/recording.md §Fibers) */
#define CO_SUSPENDS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)

/* A suspendable frame's state between its resumptions, in g_gens by the
 * address of its generator object. */
typedef struct gen_state {
  const void *code;    /* its code object: an entry whose generator died unseen is told stale by it */
  strobe_site *site;   /* its scope's site, NULL: untraced */
  strobe_fiber *own;   /* its own fiber (a generator's), or NULL: on its chain's stack */
  strobe_fiber *stack; /* the stack its scope is open on */
  int began;           /* its scope is open */
  int running;         /* its frame runs on some thread (a call record points here): never freed then */
} gen_state;

typedef struct call_rec {
  strobe_site *site;    /* the scope this call began, or NULL */
  strobe_fiber *fiber;  /* the stack it began on */
  gen_state *gen;       /* a suspendable frame's state, or NULL */
  strobe_fiber *back;   /* a generator's: the stack its caller was on (it goes back there at a suspension) */
  strobe_fiber *back_gen; /* and the generator fiber the thread was following then */
  int stepped;            /* a generator's: a generator_step scope is open on `back` */
  int c_call;             /* a C function's call (c_calls on): only its c_return or c_exception ends it */
} call_rec;

typedef struct profile_state {
  uint32_t depth;              /* calls seen since the hook was set, not yet returned */
  uint32_t region;             /* nested trace_calls regions open */
  strobe_fiber *gen_fiber;     /* the generator fiber the hook put this thread in, or NULL */
  call_rec calls[PROFILE_STACK];
} profile_state;
static _Thread_local profile_state *tls_profile;
static PyObject *g_code_sites; /* dict code -> int (site address), or None: not traced */
static PyObject *g_all_files;  /* set of co_filename traced by trace_all, or NULL */
static PyObject *g_all_codes;  /* set of code objects traced by trace_all (functions), or NULL */
static int g_all_everything;   /* 1: trace_all traces every file (python -m strobe) */
static PyObject *g_all_excluded; /* set of code objects of those files left out (trace_all exclude=), or NULL */
static PyObject *g_gens;       /* dict generator address -> int (gen_state address) */
static strobe_fiber *g_gen_pool[GEN_FIBERS]; /* idle generator fibers */
static unsigned g_gen_idle, g_gen_live;
static uint64_t g_profile_cut, g_mismatched, g_resumptions_unfollowed;
static strobe_site g_suspended_site = {"suspended", "python", NULL, __FILE__, "profile_hook", __LINE__,
                                       STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};
/* On its caller's stack while a generator runs on its own fiber: the caller's
 * frame does not show the generator's work as its own self time. */
static strobe_site g_gen_step_site = {"generator_step", "python", NULL, __FILE__, "gen_enter", __LINE__,
                                      STROBE_SITE_SCOPE, 0, STROBE_UNIT_NONE, 0};

static strobe_site *code_site(PyCodeObject *code) {
  PyObject *hit = PyDict_GetItemWithError(g_code_sites, (PyObject *)code);
  if (hit) return hit == Py_None ? NULL : (strobe_site *)PyLong_AsVoidPtr(hit);
  if (PyErr_Occurred()) return NULL;
  /* "qualname (file:line)", at most STROBE_MAX_INTERNED_NAME bytes: a long
   * path keeps its end, which tells files apart. */
  Py_ssize_t nlen, flen;
  const char *name = PyUnicode_AsUTF8AndSize(code->co_qualname, &nlen);
  const char *file = name ? PyUnicode_AsUTF8AndSize(code->co_filename, &flen) : NULL;
  if (!file) return NULL;
  char buf[STROBE_MAX_INTERNED_NAME + 1];
  if (nlen > 160) nlen = 160;
  char line[24];
  int llen = snprintf(line, sizeof line, ":%d)", code->co_firstlineno);
  Py_ssize_t room = (Py_ssize_t)sizeof buf - 1 - nlen - 2 - llen;
  const char *f = flen > room ? file + (flen - room) : file;
  int len = snprintf(buf, sizeof buf, "%.*s (%s%s", (int)nlen, name, f, line);
  strobe_site *site = strobe_site_intern(buf, (size_t)len, "python", STROBE_SITE_SCOPE);
  PyObject *addr = PyLong_FromVoidPtr(site);
  if (!addr || PyDict_SetItem(g_code_sites, (PyObject *)code, addr) < 0) {
    Py_XDECREF(addr);
    return NULL;
  }
  Py_DECREF(addr);
  return site;
}

static int traced_by_all(PyCodeObject *code) {
  if (g_all_everything) return 1;
  if (g_all_codes && PySet_Contains(g_all_codes, (PyObject *)code) == 1) return 1;
  return g_all_files && PySet_Contains(g_all_files, code->co_filename) == 1 &&
         !(g_all_excluded && PySet_Contains(g_all_excluded, (PyObject *)code) == 1);
}

/* Puts the thread on `f` (NULL: its own stack). 0, or -1 when another thread holds f. */
static int stack_enter(strobe_fiber *f) {
  if (strobe_fiber_query_current() == f) return 0;
  return f ? fiber_go(f) : (thread_go(), 0);
}

/* The hook is set on this thread and the thread's innermost open scope is a
 * traced call's (the frame that runs a task's step, as the loop's
 * Handle._run): its return brings the thread back to its own stack. */
static int hook_here(void) {
  profile_state *p = tls_profile;
  if (!p || !(p->region || g_all_files || g_all_codes || g_all_everything)) return 0;
  const strobe_site *top = strobe_thread_query_scope();
  if (!top) return 0;
  for (uint32_t d = p->depth < PROFILE_STACK ? p->depth : PROFILE_STACK; d-- > 0;) {
    const call_rec *rec = &p->calls[d];
    if (rec->site || rec->gen) return rec->site == top && !rec->fiber;
  }
  return 0;
}

/* Ends `site`'s scope when it is the innermost open one; otherwise counts a
 * mismatch and ends nothing. */
static void end_checked(const strobe_site *site) {
  /* The top frame first (what strobe_thread_query_scope finds when no loop
   * bookkeeping sits above the innermost scope), inline as STROBE_END is. */
  const strobe__frame *top = strobe__tls->top;
  if ((top->word & ~(uintptr_t)STROBE__FRAME_FLAGS) == (uintptr_t)site || strobe_thread_query_scope() == site)
    STROBE_END();
  else
    g_mismatched++;
}

/* A begin of `site` on the current stack: 1 when a scope was pushed. */
static int begin_site(strobe_site *site) {
  return strobe__begin_slow(site, STROBE__FRAME_EXPLICIT, STROBE__SP_HELD) != 0; /* STROBE_BEGIN_SITE */
}

static strobe_fiber *g_gen_all[GEN_FIBERS]; /* every generator fiber alive, idle or not */

static int is_gen_fiber(strobe_fiber *f) {
  for (unsigned i = 0; i < GEN_FIBERS; i++)
    if (g_gen_all[i] == f) return 1;
  return 0;
}

static strobe_fiber *gen_fiber_take(void) {
  if (g_gen_idle) return g_gen_pool[--g_gen_idle];
  if (g_gen_live >= GEN_FIBERS) return NULL;
  char name[32];
  int len = snprintf(name, sizeof name, "python generators %u", g_gen_live + 1);
  strobe_fiber *f = NULL;
  if (strobe_fiber_create(name, (size_t)len, &f) != 0) return NULL;
  for (unsigned i = 0; i < GEN_FIBERS; i++)
    if (!g_gen_all[i]) {
      g_gen_all[i] = f;
      break;
    }
  g_gen_live++;
  return f;
}

/* A generator fiber back to the pool; one left with scopes open (a
 * mismatch) is destroyed instead, which closes and counts them. */
static void gen_fiber_give(strobe_fiber *f) {
  /* Looked into and left without the step rules: the thread ends on the stack it was on. */
  strobe_fiber *prev = strobe_fiber_query_current();
  if (prev == f) {
    (void)strobe_fiber_leave();
    prev = NULL;
  }
  int clean = 0;
  if (strobe_fiber_enter(f) == 0) {
    clean = strobe_thread_query_scope() == NULL;
    (void)strobe_fiber_leave();
  }
  if (clean && g_gen_idle < GEN_FIBERS) {
    g_gen_pool[g_gen_idle++] = f;
  } else if (strobe_fiber_destroy(f) == 0) {
    g_gen_live--;
    for (unsigned i = 0; i < GEN_FIBERS; i++)
      if (g_gen_all[i] == f) g_gen_all[i] = NULL;
  }
  if (prev) (void)strobe_fiber_enter(prev);
}

/* Into a generator's own fiber from its caller's stack (rec->back), a
 * generator_step scope opened there first. 0, or -1 (held elsewhere). */
static int gen_enter(profile_state *p, call_rec *rec, strobe_fiber *own) {
  rec->stepped = begin_site(&g_gen_step_site);
  if (stack_enter(own) < 0) {
    if (rec->stepped && strobe_thread_query_scope() == &g_gen_step_site) STROBE_END();
    rec->stepped = 0;
    return -1;
  }
  p->gen_fiber = own;
  return 0;
}

/* The first call of a suspendable frame: its state, its scope begun on its
 * stack (its own fiber for a generator). 0, or -1 with nothing recorded
 * (the call is then traced as a plain one, a resumption at a time). */
static int gen_first_call(profile_state *p, call_rec *rec, PyObject *key, const void *code, int flags,
                          strobe_site *site) {
  if (context_enter() < 0) return -1;
  strobe_fiber *own = NULL;
  if (!(flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE)) || !strobe_fiber_query_current()) {
    /* A generator, or a coroutine no task drives: a stack of its own. */
    own = gen_fiber_take();
    if (!own) {
      g_resumptions_unfollowed++;
      return -1;
    }
  }
  gen_state *st = PyMem_RawCalloc(1, sizeof *st);
  PyObject *val = st ? PyLong_FromVoidPtr(st) : NULL;
  if (!val || PyDict_SetItem(g_gens, key, val) < 0) {
    Py_XDECREF(val);
    PyMem_RawFree(st);
    if (own) gen_fiber_give(own);
    return -1;
  }
  Py_DECREF(val);
  *st = (gen_state){.code = code, .site = site, .own = own, .running = 1};
  rec->gen = st;
  rec->back = strobe_fiber_query_current();
  rec->back_gen = p->gen_fiber;
  if (own && gen_enter(p, rec, own) < 0) return 0; /* cannot happen: a pooled fiber is held by no thread */
  st->stack = strobe_fiber_query_current();
  st->began = begin_site(site);
  return 0;
}

/* Forgets a suspendable frame's state (its end, or a stale entry). */
static void gen_forget(PyObject *key, gen_state *st) {
  if (st->own) gen_fiber_give(st->own);
  if (PyDict_DelItem(g_gens, key) < 0) PyErr_Clear();
  PyMem_RawFree(st);
}

/* A resumption: back on its stack, the "suspended" scope on top ended. */
static void gen_resume(profile_state *p, call_rec *rec, gen_state *st) {
  st->running = 1;
  rec->back = strobe_fiber_query_current();
  rec->back_gen = p->gen_fiber;
  /* Its record says nothing yet while it switches stacks, so a step
   * (>>steps) is judged by the frame that resumes it. */
  int on_stack = st->own ? gen_enter(p, rec, st->own) == 0 : st->began && stack_enter(st->stack) == 0;
  rec->gen = st;
  if (on_stack && strobe_thread_query_scope() == &g_suspended_site) STROBE_END();
}

/* A suspension (done = 0) or the frame's end (done = 1) of a suspendable frame. */
static void gen_leave(profile_state *p, call_rec *rec, PyObject *gen, int done) {
  gen_state *st = rec->gen;
  rec->gen = NULL;
  st->running = 0;
  int on_stack = st->own ? strobe_fiber_query_current() == st->own : st->began && stack_enter(st->stack) == 0;
  if (on_stack && st->began) {
    if (done)
      end_checked(st->site);
    else if (strobe_thread_query_scope() != &g_suspended_site)
      (void)begin_site(&g_suspended_site);
  }
  if (st->own) {
    p->gen_fiber = rec->back_gen;
    (void)stack_enter(rec->back);
    if (rec->stepped && strobe_fiber_query_current() == rec->back && strobe_thread_query_scope() == &g_gen_step_site)
      STROBE_END();
    rec->stepped = 0;
  }
  if (done) {
    PyObject *key = PyLong_FromVoidPtr(gen);
    if (key) gen_forget(key, st);
    Py_XDECREF(key);
  }
}

/* A generator frame is suspended (not ended) when its generator is not running: CPython marks it
 * suspended before the "return" event of a yield or an await (states below 0 in 3.11-3.13). */
static int gen_suspended(PyObject *gen) { return ((PyGenObject *)gen)->gi_frame_state < 0; }

static void profile_call(profile_state *p, PyFrameObject *frame) {
  uint32_t d = p->depth++;
  if (d >= PROFILE_STACK) {
    g_profile_cut++;
    return;
  }
  call_rec *rec = &p->calls[d];
  rec->site = NULL; /* the fields a return reads; the others are written before they are read */
  rec->gen = NULL;
  rec->c_call = 0;
  rec->stepped = 0;
  if (!strobe__is_active()) return;
  PyCodeObject *code = PyFrame_GetCode(frame);
  int flags = code->co_flags;
  strobe_site *site = p->region || traced_by_all(code) ? code_site(code) : NULL;
  Py_DECREF(code); /* the frame keeps it: its address stays valid */
  PyObject *gen = flags & CO_SUSPENDS ? PyFrame_GetGenerator(frame) : NULL;
  PyObject *key = gen ? PyLong_FromVoidPtr(gen) : NULL;
  Py_XDECREF(gen); /* alive while its frame runs; only its address is kept */
  if (key) {
    PyObject *hit = PyDict_GetItemWithError(g_gens, key);
    gen_state *st = hit ? (gen_state *)PyLong_AsVoidPtr(hit) : NULL;
    if (st && st->code != code) {
      gen_forget(key, st); /* its generator died while no hook saw it end */
      st = NULL;
    }
    int done = st ? (gen_resume(p, rec, st), 1) : site && gen_first_call(p, rec, key, code, flags, site) == 0;
    Py_DECREF(key);
    if (done) return;
  }
  if (PyErr_Occurred()) PyErr_Clear();
  if (!site || context_enter() < 0) {
    PyErr_Clear();
    return;
  }
  if (begin_site(site)) {
    rec->site = site;
    rec->fiber = strobe_fiber_query_current();
  }
}

static void profile_return(profile_state *p, PyFrameObject *frame) {
  if (!p->depth) return; /* a frame entered before the hook was set */
  uint32_t d = --p->depth;
  if (d >= PROFILE_STACK) return;
  call_rec *rec = &p->calls[d];
  if (rec->gen) {
    PyObject *gen = PyFrame_GetGenerator(frame);
    if (gen) {
      Py_DECREF(gen);
      gen_leave(p, rec, gen, !gen_suspended(gen));
    }
    return;
  }
  if (!rec->site) return;
  if (stack_enter(rec->fiber) == 0) end_checked(rec->site);
  rec->site = NULL;
}

/* >>c calls: with c_calls on, a C function called from a traced Python frame
 * is a scope too, named "owner.name (built-in)" and cached by its method
 * definition (a bound method is a new object at each call, its definition is
 * not), category "python". */
static int g_c_calls;          /* 1: record C calls from traced frames (trace_calls/trace_all c_calls=True) */
static PyObject *g_c_sites;    /* dict method-definition address -> int (site address) */

static PyObject *g_module; /* this module (borrowed: it lives as long as the process) */

static strobe_site *c_site(PyObject *fn) {
  if (!PyCFunction_Check(fn)) return NULL;
  PyCFunctionObject *f = (PyCFunctionObject *)fn;
  /* The binding's own calls (the region's end, which removes the hook
   * before its return is seen) are never recorded. */
  if (f->m_self && f->m_self == g_module) return NULL;
  PyObject *key = PyLong_FromVoidPtr(f->m_ml);
  if (!key) return NULL;
  PyObject *hit = PyDict_GetItemWithError(g_c_sites, key);
  strobe_site *site = hit ? (strobe_site *)PyLong_AsVoidPtr(hit) : NULL;
  if (!hit && !PyErr_Occurred()) {
    const char *owner = NULL;
    if (f->m_self && PyModule_Check(f->m_self))
      owner = PyModule_GetName(f->m_self);
    else if (f->m_self)
      owner = Py_TYPE(f->m_self)->tp_name;
    if (PyErr_Occurred()) PyErr_Clear();
    char buf[STROBE_MAX_INTERNED_NAME + 1];
    int len = snprintf(buf, sizeof buf, "%.100s%s%.100s (built-in)", owner ? owner : "", owner ? "." : "",
                       f->m_ml->ml_name);
    site = strobe_site_intern(buf, (size_t)len, "python", STROBE_SITE_SCOPE);
    PyObject *addr = PyLong_FromVoidPtr(site);
    if (!addr || PyDict_SetItem(g_c_sites, key, addr) < 0) site = NULL;
    Py_XDECREF(addr);
  }
  Py_DECREF(key);
  return site;
}

static void profile_c_call(profile_state *p, PyFrameObject *frame, PyObject *fn) {
  if (!g_c_calls || !strobe__is_active()) return;
  PyCodeObject *code = PyFrame_GetCode(frame);
  int traced = p->region || traced_by_all(code);
  Py_DECREF(code);
  strobe_site *site = traced ? c_site(fn) : NULL;
  if (!site || context_enter() < 0) {
    PyErr_Clear();
    return;
  }
  if (p->depth >= PROFILE_STACK) { /* not pushed: its return finds no C record on top */
    g_profile_cut++;
    return;
  }
  call_rec *rec = &p->calls[p->depth++];
  *rec = (call_rec){.c_call = 1};
  if (begin_site(site)) {
    rec->site = site;
    rec->fiber = strobe_fiber_query_current();
  }
}

static void profile_c_return(profile_state *p) {
  if (!p->depth || p->depth > PROFILE_STACK || !p->calls[p->depth - 1].c_call) return; /* not one pushed */
  call_rec *rec = &p->calls[--p->depth];
  rec->c_call = 0;
  if (!rec->site) return;
  if (stack_enter(rec->fiber) == 0) end_checked(rec->site);
  rec->site = NULL;
}

static int profile_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
  (void)obj;
  profile_state *p = tls_profile;
  if (!p) return 0;
  if (what == PyTrace_CALL)
    profile_call(p, frame);
  else if (what == PyTrace_RETURN)
    profile_return(p, frame);
  else if (what == PyTrace_C_CALL)
    profile_c_call(p, frame, arg);
  else if (what == PyTrace_C_RETURN || what == PyTrace_C_EXCEPTION)
    profile_c_return(p);
  return 0;
}

/* _trace_c_calls(on): whether C calls from traced frames are recorded; returns the previous setting. */
static PyObject *py_trace_c_calls(PyObject *mod, PyObject *arg) {
  (void)mod;
  int on = PyObject_IsTrue(arg);
  if (on < 0) return NULL;
  int was = g_c_calls;
  g_c_calls = on;
  return PyBool_FromLong(was);
}

/* The hook is gone from this thread and from trace_all: the suspendable
 * frames it followed are forgotten (their fibers back to the pool). */
static void gen_purge(profile_state *p) {
  PyObject *key, *val;
  Py_ssize_t pos = 0;
  p->gen_fiber = NULL;
  PyObject *kept = PyDict_New();
  while (PyDict_Next(g_gens, &pos, &key, &val)) {
    gen_state *st = PyLong_AsVoidPtr(val);
    if (st->running) { /* on another thread's stack still: its own end forgets it */
      if (!kept || PyDict_SetItem(kept, key, val) < 0) PyErr_Clear();
      continue;
    }
    if (st->own) gen_fiber_give(st->own);
    PyMem_RawFree(st);
  }
  PyDict_Clear(g_gens);
  if (kept) {
    if (PyDict_Update(g_gens, kept) < 0) PyErr_Clear();
    Py_DECREF(kept);
  }
}

static profile_state *profile_state_get(void) {
  if (!tls_profile) tls_profile = PyMem_RawCalloc(1, sizeof *tls_profile);
  if (!tls_profile) return (profile_state *)PyErr_NoMemory();
  tls_gen_fiber = &tls_profile->gen_fiber;
  return tls_profile;
}

/* _trace_region(on): opens (1) or closes (0) a trace_calls region on this thread. */
static PyObject *py_trace_region(PyObject *mod, PyObject *arg) {
  (void)mod;
  int on = PyObject_IsTrue(arg);
  if (on < 0) return NULL;
  profile_state *p = profile_state_get();
  if (!p) return NULL;
  if (on) {
    if (!p->region++ && !g_all_files && !g_all_codes && !g_all_everything) {
      p->depth = 0;
      PyEval_SetProfile(profile_hook, NULL);
    }
  } else {
    if (!p->region) {
      PyErr_SetString(PyExc_RuntimeError, "no trace_calls region is open on this thread");
      return NULL;
    }
    if (!--p->region && !g_all_files && !g_all_codes && !g_all_everything) {
      PyEval_SetProfile(NULL, NULL);
      gen_purge(p);
    }
  }
  Py_RETURN_NONE;
}

/* _trace_all_set(files, codes, excluded): what trace_all traces from now on (None, None, None: nothing;
 * files True: every file);
 * sets the hook on the calling thread; __init__.py sets it for new threads. */
static PyObject *py_trace_all_set(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *files, *codes, *excluded;
  if (!PyArg_ParseTuple(args, "OOO", &files, &codes, &excluded)) return NULL;
  g_all_everything = files == Py_True; /* python -m strobe: every file */
  if (g_all_everything) files = Py_None;
  if ((files != Py_None && !PyAnySet_Check(files)) || (codes != Py_None && !PyAnySet_Check(codes)) ||
      (excluded != Py_None && !PyAnySet_Check(excluded))) {
    PyErr_SetString(PyExc_TypeError, "_trace_all_set takes sets or None");
    return NULL;
  }
  Py_XSETREF(g_all_files, files == Py_None ? NULL : Py_NewRef(files));
  Py_XSETREF(g_all_excluded, excluded == Py_None ? NULL : Py_NewRef(excluded));
  Py_XSETREF(g_all_codes, codes == Py_None ? NULL : Py_NewRef(codes));
  PyDict_Clear(g_code_sites);
  profile_state *p = profile_state_get();
  if (!p) return NULL;
  if (g_all_files || g_all_codes || g_all_everything) {
    PyEval_SetProfile(profile_hook, NULL);
  } else if (!p->region) {
    PyEval_SetProfile(NULL, NULL);
    gen_purge(p);
  }
  Py_RETURN_NONE;
}

/* _profile_thread(): the hook, for a thread trace_all reaches (threading.setprofile). */
static PyObject *py_profile_thread(PyObject *mod, PyObject *const *args, Py_ssize_t n) {
  (void)mod;
  (void)args;
  (void)n;
  if (!profile_state_get()) return NULL;
  tls_profile->depth = 0;
  PyEval_SetProfile(profile_hook, NULL);
  Py_RETURN_NONE;
}

/* >>recording: strobe.Recorder(path) and strobe.FlightRecorder(...). */
typedef struct recorder_obj {
  PyObject_HEAD
  strobe_recorder *rec;
} recorder_obj;

static PyObject *recorder_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"path", "flush_interval_ms", NULL};
  PyObject *path_obj;
  unsigned int flush = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|I:Recorder", kwlist, PyUnicode_FSConverter, &path_obj, &flush))
    return NULL;
  strobe_recorder *rec = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = strobe_record_start(&(strobe_record_desc){.path = PyBytes_AS_STRING(path_obj), .flush_interval_ms = flush}, &rec);
  Py_END_ALLOW_THREADS
  Py_DECREF(path_obj);
  if (rc != 0) {
    PyErr_Format(PyExc_OSError, "strobe: cannot record: %s (%s)", strobe_strerror(rc), strobe_err_name(rc));
    return NULL;
  }
  recorder_obj *self = (recorder_obj *)type->tp_alloc(type, 0);
  if (!self) {
    (void)strobe_record_stop(rec);
    return NULL;
  }
  self->rec = rec;
  return (PyObject *)self;
}

static int recorder_stop_now(recorder_obj *self) {
  strobe_recorder *rec = self->rec;
  self->rec = NULL;
  if (!rec) return 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = strobe_record_stop(rec);
  Py_END_ALLOW_THREADS
  return rc;
}

static PyObject *recorder_stop(recorder_obj *self, PyObject *unused) {
  (void)unused;
  int rc = recorder_stop_now(self);
  if (rc != 0) return PyErr_Format(PyExc_OSError, "strobe: the capture is incomplete: %s", strobe_strerror(rc));
  Py_RETURN_NONE;
}

static void recorder_dealloc(recorder_obj *self) {
  (void)recorder_stop_now(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* __enter__ of the types whose with block only ends them (recorder, window). */
static PyObject *enter_self(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *recorder_exit(recorder_obj *self, PyObject *const *args, Py_ssize_t n) {
  (void)args;
  (void)n;
  PyObject *r = recorder_stop(self, NULL);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static PyMethodDef recorder_methods[] = {
    {"stop", (PyCFunction)recorder_stop, METH_NOARGS, "Delivers every event, writes the footer and closes the file."},
    {"__enter__", enter_self, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))recorder_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject recorder_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.Recorder",
    .tp_basicsize = sizeof(recorder_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Recorder(path): records a capture file until stop() (or the with block's end).",
    .tp_new = recorder_new,
    .tp_dealloc = (destructor)recorder_dealloc,
    .tp_methods = recorder_methods,
};

typedef struct flight_obj {
  PyObject_HEAD
  strobe_flight_recorder *fr;
} flight_obj;

static PyObject *flight_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"max_mib", "max_age_ms", NULL};
  unsigned int mib = 0, age = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|II:FlightRecorder", kwlist, &mib, &age)) return NULL;
  strobe_flight_recorder *fr = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = strobe_flight_recorder_start(&(strobe_flight_recorder_desc){.max_mib = mib, .max_age_ms = age}, &fr);
  Py_END_ALLOW_THREADS
  if (rc != 0) return PyErr_Format(PyExc_OSError, "strobe: cannot start the flight recorder: %s (%s)",
                                   strobe_strerror(rc), strobe_err_name(rc));
  flight_obj *self = (flight_obj *)type->tp_alloc(type, 0);
  if (!self) {
    (void)strobe_flight_recorder_stop(fr);
    return NULL;
  }
  self->fr = fr;
  return (PyObject *)self;
}

static PyObject *flight_dump(flight_obj *self, PyObject *arg) {
  PyObject *path_obj;
  if (!self->fr) {
    PyErr_SetString(PyExc_RuntimeError, "the flight recorder was stopped");
    return NULL;
  }
  if (!PyUnicode_FSConverter(arg, &path_obj)) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = strobe_flight_recorder_dump(self->fr, PyBytes_AS_STRING(path_obj));
  Py_END_ALLOW_THREADS
  Py_DECREF(path_obj);
  if (rc != 0) return PyErr_Format(PyExc_OSError, "strobe: cannot dump: %s (%s)", strobe_strerror(rc), strobe_err_name(rc));
  Py_RETURN_NONE;
}

static PyObject *flight_stop(flight_obj *self, PyObject *unused) {
  (void)unused;
  strobe_flight_recorder *fr = self->fr;
  self->fr = NULL;
  if (fr) {
    Py_BEGIN_ALLOW_THREADS
    (void)strobe_flight_recorder_stop(fr);
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

static void flight_dealloc(flight_obj *self) {
  if (self->fr) (void)strobe_flight_recorder_stop(self->fr);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef flight_methods[] = {
    {"dump", (PyCFunction)flight_dump, METH_O, "dump(path): writes the recent events as a capture file."},
    {"stop", (PyCFunction)flight_stop, METH_NOARGS, "Stops the flight recorder and frees its ring."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject flight_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.FlightRecorder",
    .tp_basicsize = sizeof(flight_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "FlightRecorder(max_mib=64, max_age_ms=10000): keeps the recent events in memory; dump(path) writes them.",
    .tp_new = flight_new,
    .tp_dealloc = (destructor)flight_dealloc,
    .tp_methods = flight_methods,
};

/* >>sessions: strobe.Window, strobe.operation, strobe.stage, op_counter and
 * the session calls behind strobe.Session (__init__.py), on the process's
 * default collector (session.h; docs/sessions.md). Labels that leave the
 * process in a report (stage names and parents, populations, counter names)
 * must follow the label rule: a bad one raises ValueError before anything
 * records, as C's calls refuse it with STROBE_ELABEL. Stage names become
 * sites of the binding's own (like a C program's static STROBE_STAGE_SITE,
 * not interned), so reports name them: they are static labels by contract. */
static PyObject *g_error; /* strobe.Error */

/* Raises the error of a libstrobe code: ValueError for bad arguments and
 * labels, strobe.Error (with .code and .name) for the rest. */
static PyObject *raise_rc(int rc, const char *what) {
  if (rc == STROBE_ELABEL || rc == STROBE_EINVAL)
    return PyErr_Format(PyExc_ValueError, "strobe: %s: %s", what, strobe_strerror(rc));
  PyObject *msg = PyUnicode_FromFormat("strobe: %s: %s (%s)", what, strobe_strerror(rc), strobe_err_name(rc));
  if (!msg) return NULL;
  PyObject *exc = PyObject_CallOneArg(g_error, msg);
  Py_DECREF(msg);
  if (!exc) return NULL;
  PyObject *code = PyLong_FromLong(rc), *name = PyUnicode_FromString(strobe_err_name(rc));
  if (code && name && PyObject_SetAttrString(exc, "code", code) == 0 && PyObject_SetAttrString(exc, "name", name) == 0)
    PyErr_SetObject(g_error, exc);
  Py_XDECREF(code);
  Py_XDECREF(name);
  Py_DECREF(exc);
  return NULL;
}

/* A label argument (str or None when optional) as UTF-8, refused with ValueError
 * when it breaks the label rule. */
static int label_arg(PyObject *obj, const char *what, const char **out) {
  *out = NULL;
  if (obj == Py_None) return 0;
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "strobe: %s is a str, not %.80s", what, Py_TYPE(obj)->tp_name);
    return -1;
  }
  const char *s = PyUnicode_AsUTF8(obj);
  if (!s) return -1;
  if (!strobe_label_valid(s)) {
    PyErr_Format(PyExc_ValueError, "strobe: %s %R breaks the label rule (1-64 of [A-Za-z0-9_], a static label)",
                 what, obj);
    return -1;
  }
  *out = s;
  return 0;
}

/* An operation kind's number from its name ("pass", "request": STROBE_OP_KINDS), or -1 with ValueError. */
static int op_kind_of(PyObject *name) {
  const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (s) {
#define KIND_MATCH(id, number, text) \
  if (!strcmp(s, text)) return number;
    STROBE_OP_KINDS(KIND_MATCH)
#undef KIND_MATCH
  }
  if (!PyErr_Occurred()) {
    PyErr_Format(PyExc_ValueError, "strobe: unknown operation kind %R (one of:"
#define KIND_TEXT(id, number, text) " " text
                 STROBE_OP_KINDS(KIND_TEXT)
#undef KIND_TEXT
                 ")", name);
  }
  return -1;
}

static strobe_collector *collector(void) {
  strobe_collector *c = strobe_default_collector();
  if (!c) raise_rc(STROBE_EFEATURE_DISABLED, "no collector");
  return c;
}

/* strobe.Window(id, devtools=False): a toolkit window identity ("main"), registered until close(). */
typedef struct window_obj {
  PyObject_HEAD
  strobe_window w;
  int open;
} window_obj;

static PyObject *window_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"id", "devtools", NULL};
  const char *id;
  int devtools = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|p:Window", kwlist, &id, &devtools)) return NULL;
  strobe_collector *c = collector();
  if (!c) return NULL;
  strobe_window w;
  int rc = strobe_window_register(c, id, devtools ? STROBE_WINDOW_DEVTOOLS : 0, &w);
  if (rc != 0) return raise_rc(rc, "cannot register the window");
  window_obj *self = (window_obj *)type->tp_alloc(type, 0);
  if (!self) {
    (void)strobe_window_close(c, w);
    return NULL;
  }
  self->w = w;
  self->open = 1;
  return (PyObject *)self;
}

static PyObject *window_close(window_obj *self, PyObject *unused) {
  (void)unused;
  if (self->open) {
    self->open = 0;
    (void)strobe_window_close(strobe_default_collector(), self->w);
  }
  Py_RETURN_NONE;
}

static void window_dealloc(window_obj *self) {
  if (self->open) (void)strobe_window_close(strobe_default_collector(), self->w);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *window_exit(window_obj *self, PyObject *const *args, Py_ssize_t n) {
  (void)args;
  (void)n;
  Py_DECREF(window_close(self, NULL));
  Py_RETURN_FALSE;
}

static PyMethodDef window_methods[] = {
    {"close", (PyCFunction)window_close, METH_NOARGS, "Closes the window: its live operations are abandoned."},
    {"__enter__", enter_self, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))window_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject window_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.Window",
    .tp_basicsize = sizeof(window_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Window(id, devtools=False): a toolkit window identity (\"main\", \"w1/popup\"; never a title) on "
              "the default collector, open until close() or the with block's end.",
    .tp_new = window_new,
    .tp_dealloc = (destructor)window_dealloc,
    .tp_methods = window_methods,
};

/* strobe.operation(kind="request", window=w, frame_id=None, population=None)
 * (or operation(w, kind, ...)): one operation (session.h strobe_op_begin)
 * from __enter__ to __exit__. A refusal never stops the caller's work: the
 * operation is inert and .status says why. An exception through the block,
 * or drop(), ends it not committed.
 *
 * An operation follows its contextvars context, not its thread: it is the
 * current operation of the context that entered it (an asyncio task, and the
 * tasks it starts, which copy its context), kept in a ContextVar. Before
 * anything that acts on the current operation (a stage, a counter, a mark,
 * the operation's own end), op_switch makes the running context's operation
 * the thread's current one: the thread's previous one is parked with its
 * open stages (strobe_op_park) and this one unparked (docs/sessions.md
 * §Parked operations), so tasks interleaving on one loop keep their own
 * operations and stages, each stage timing its awaits. */
#define OP_NEST 8 /* operations nested in one context that op_switch parks and unparks together */
typedef struct op_obj {
  PyObject_HEAD
  PyObject *window; /* window_obj */
  int kind;
  int has_frame;
  unsigned long long frame_id;
  PyObject *population; /* str or NULL */
  strobe_op op;
  int status;
  int state;   /* 0 new, 1 open, 2 ended */
  int dropped;
  int parked;  /* set aside by op_switch (strobe_op_park) */
  const void *thread; /* the thread it began on (its tls_op_marker) */
  PyObject *outer;    /* the context's operation when it began (op_obj), or NULL */
  PyObject *token;    /* its ContextVar token */
} op_obj;

static PyTypeObject op_type;
static PyObject *g_op_var;              /* ContextVar "strobe_operation": the context's innermost op_obj */
static _Thread_local PyObject *tls_op_owner; /* the op_obj whose operation is current on this thread (strong) */
static _Thread_local char tls_op_marker;     /* its address tells threads apart */

static int op_live_here(op_obj *o) { return o && o->state == 1 && o->op.id && o->thread == &tls_op_marker; }

/* Parks o and the open operations of its context under it (innermost first). */
static void op_park_chain(op_obj *o) {
  for (int n = 0; n < OP_NEST && op_live_here(o); n++, o = (op_obj *)o->outer) {
    if (o->parked) continue;
    strobe_op p = strobe_op_park();
    if (p.id == o->op.id && p.collector == o->op.collector) {
      o->parked = 1;
    } else {
      if (p.id) (void)strobe_op_unpark(p); /* not this one (code outside the binding began it): put back */
      return;
    }
  }
}

/* Unparks o and the operations of its context under it (outermost first). */
static void op_unpark_chain(op_obj *o, int n) {
  if (!op_live_here(o) || n >= OP_NEST) return;
  op_unpark_chain((op_obj *)o->outer, n + 1);
  if (o->parked && strobe_op_unpark(o->op) == 0) o->parked = 0;
}

/* Makes the running context's operation the thread's current one. 0, or -1 with an exception. */
static int op_switch(void) {
  PyObject *cur = NULL;
  if (PyContextVar_Get(g_op_var, NULL, &cur) < 0) return -1;
  if (cur != tls_op_owner) {
    if (tls_op_owner) op_park_chain((op_obj *)tls_op_owner);
    if (cur) op_unpark_chain((op_obj *)cur, 0);
    Py_XSETREF(tls_op_owner, Py_XNewRef(cur));
  }
  Py_XDECREF(cur);
  return 0;
}

static PyObject *op_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"kind", "window", "frame_id", "population", NULL};
  PyObject *first = NULL, *second = NULL, *frame = Py_None, *population = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOO:operation", kwlist, &first, &second, &frame, &population))
    return NULL;
  /* operation("request", window=w) or operation(w, "request"). */
  PyObject *window = first && Py_IS_TYPE(first, &window_type) ? first : second;
  PyObject *kind = window == first ? second : first;
  if (!window || !Py_IS_TYPE(window, &window_type))
    return PyErr_Format(PyExc_TypeError, "strobe.operation needs a window (a strobe.Window)");
  if (kind && !PyUnicode_Check(kind))
    return PyErr_Format(PyExc_TypeError, "strobe.operation's kind is a str (\"request\", \"pass\", ...)");
  int k = STROBE_OP_REQUEST;
  if (kind && (k = op_kind_of(kind)) < 0) return NULL;
  const char *pop;
  if (label_arg(population, "population", &pop) < 0) return NULL;
  unsigned long long fid = 0;
  if (frame != Py_None) {
    if (k != STROBE_OP_PASS) return PyErr_Format(PyExc_ValueError, "strobe: a frame_id is for kind \"pass\" only");
    fid = PyLong_AsUnsignedLongLong(frame);
    if (PyErr_Occurred()) return NULL;
  }
  op_obj *self = (op_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->window = Py_NewRef(window);
  self->kind = k;
  self->has_frame = frame != Py_None;
  self->frame_id = fid;
  self->population = pop ? Py_NewRef(population) : NULL;
  return (PyObject *)self;
}

static void op_dealloc(op_obj *self) {
  if (self->state == 1) strobe_op_end(self->op, 0); /* never exited: not a completed unit */
  Py_XDECREF(self->window);
  Py_XDECREF(self->population);
  Py_XDECREF(self->outer);
  Py_XDECREF(self->token);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *op_enter(op_obj *self, PyObject *unused) {
  (void)unused;
  if (self->state != 0) {
    PyErr_SetString(PyExc_RuntimeError, "this operation was already entered: make a new strobe.operation for each");
    return NULL;
  }
  strobe_collector *c = collector();
  if (!c || op_switch() < 0) return NULL; /* the context's own operation (if any) is current: this one nests in it */
  strobe_window w = ((window_obj *)self->window)->w;
  int status = 0;
  self->op = self->has_frame ? strobe_op_begin_frame(c, w, self->frame_id, &status)
                             : strobe_op_begin(c, w, (strobe_op_kind)self->kind, &status);
  self->status = self->op.id ? 0 : (status ? status : STROBE_EFEATURE_DISABLED);
  if (self->op.id && self->population) (void)strobe_op_set_population(PyUnicode_AsUTF8(self->population));
  self->state = 1;
  self->thread = &tls_op_marker;
  if (self->op.id) {
    self->outer = Py_XNewRef(tls_op_owner);
    self->token = PyContextVar_Set(g_op_var, (PyObject *)self);
    if (!self->token) {
      strobe_op_end(self->op, 0);
      self->state = 2;
      return NULL;
    }
    Py_XSETREF(tls_op_owner, Py_NewRef(self));
  }
  return Py_NewRef(self);
}

static PyObject *op_exit(op_obj *self, PyObject *const *args, Py_ssize_t n) {
  if (self->state == 1) {
    int failed = n > 0 && args[0] != Py_None;
    if (self->op.id && op_switch() < 0) PyErr_Clear();
    strobe_op_end(self->op, !failed && !self->dropped);
    self->state = 2;
    if (self->token) {
      if (PyContextVar_Reset(g_op_var, self->token) < 0) PyErr_Clear(); /* exited in another context */
      Py_CLEAR(self->token);
      Py_XSETREF(tls_op_owner, Py_XNewRef(self->outer));
    }
    Py_CLEAR(self->outer);
  }
  Py_RETURN_FALSE;
}

static PyObject *op_drop(op_obj *self, PyObject *unused) {
  (void)unused;
  self->dropped = 1;
  Py_RETURN_NONE;
}

static PyObject *op_mark_idle(op_obj *self, PyObject *unused) {
  (void)unused;
  if (self->state != 1 || !self->op.id) Py_RETURN_FALSE;
  if (op_switch() < 0) return NULL;
  return PyBool_FromLong(strobe_op_mark_idle() == 0);
}

/* set_population(label): puts the open operation in a population (a route known only after routing). */
static PyObject *op_set_population(op_obj *self, PyObject *label) {
  const char *pop;
  if (label_arg(label, "population", &pop) < 0) return NULL;
  if (!pop) return PyErr_Format(PyExc_TypeError, "strobe: a population is a str, not None");
  if (self->state != 1 || !self->op.id) Py_RETURN_FALSE;
  if (op_switch() < 0) return NULL;
  return PyBool_FromLong(strobe_op_set_population(pop) == 0);
}

/* mark_unavailable("stage" | "counter", name): the operation cannot measure that stage or counter. */
static PyObject *op_mark_unavailable(op_obj *self, PyObject *args) {
  const char *what, *name;
  PyObject *label;
  if (!PyArg_ParseTuple(args, "sO:mark_unavailable", &what, &label)) return NULL;
  strobe_coverage cov = !strcmp(what, "stage") ? STROBE_COVERAGE_STAGE : !strcmp(what, "counter") ? STROBE_COVERAGE_COUNTER : 0;
  if (!cov) return PyErr_Format(PyExc_ValueError, "strobe: mark_unavailable takes \"stage\" or \"counter\", not %R",
                                PyTuple_GET_ITEM(args, 0));
  if (label_arg(label, "unavailable name", &name) < 0) return NULL;
  if (!name) return PyErr_Format(PyExc_TypeError, "strobe: the unavailable name is a str, not None");
  if (self->state != 1 || !self->op.id) Py_RETURN_FALSE;
  if (op_switch() < 0) return NULL;
  int rc = strobe_op_mark_unavailable(cov, name);
  if (rc == STROBE_ELIMIT) return raise_rc(rc, "cannot mark it unavailable");
  return PyBool_FromLong(rc == 0);
}

static PyObject *op_get_status(op_obj *self, void *closure) {
  (void)closure;
  if (!self->status) Py_RETURN_NONE;
  return PyUnicode_FromString(strobe_err_name(self->status));
}

static PyMethodDef op_methods[] = {
    {"__enter__", (PyCFunction)op_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))op_exit, METH_FASTCALL, NULL},
    {"drop", (PyCFunction)op_drop, METH_NOARGS, "Ends the operation not committed (superseded or dropped work)."},
    {"mark_idle", (PyCFunction)op_mark_idle, METH_NOARGS,
     "Marks it idle (it had nothing to do): counted, never a sample. False when inert."},
    {"set_population", (PyCFunction)op_set_population, METH_O,
     "set_population(label): puts the open operation in a population (a static label), replacing the one given. "
     "False when inert."},
    {"mark_unavailable", (PyCFunction)op_mark_unavailable, METH_VARARGS,
     "mark_unavailable(\"stage\" or \"counter\", name): it cannot measure that one: the report shows it null "
     "(available: false), never 0. False when inert."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef op_getset[] = {
    {"status", (getter)op_get_status, NULL, "None while recording; else why it is inert (\"STROBE_EWINDOW\", ...).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject op_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.operation",
    .tp_basicsize = sizeof(op_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "operation(window, kind=\"request\", frame_id=None, population=None): one operation of the "
              "default collector (a request, a frame...) for the with block, on this thread.",
    .tp_new = op_new,
    .tp_dealloc = (destructor)op_dealloc,
    .tp_methods = op_methods,
    .tp_getset = op_getset,
};

/* strobe.stage(name, parent=None): a stage of the thread's current operation
 * (session.h strobe_stage_begin), and a capture scope; a decorator too. */
#define MAX_STAGE_SITES 1024 /* distinct (name, parent) pairs a process may declare from Python */
static PyObject *g_stage_sites; /* dict (name, parent) -> int (the site's address) */

static strobe_site *stage_site(PyObject *name, PyObject *parent) {
  const char *n, *p;
  if (label_arg(name, "stage name", &n) < 0 || label_arg(parent, "stage parent", &p) < 0) return NULL;
  PyObject *key = PyTuple_Pack(2, name, parent);
  if (!key) return NULL;
  PyObject *hit = PyDict_GetItemWithError(g_stage_sites, key);
  strobe_site *site = NULL;
  if (hit) {
    site = (strobe_site *)PyLong_AsVoidPtr(hit);
  } else if (!PyErr_Occurred()) {
    if (PyDict_GET_SIZE(g_stage_sites) >= MAX_STAGE_SITES) {
      raise_rc(STROBE_ELIMIT, "more than 1024 distinct stage names and parents");
      goto done;
    }
    /* Static storage for the life of the process, as a C stage site's. */
    size_t ln = strlen(n) + 1, lp = p ? strlen(p) + 1 : 0;
    char *mem = PyMem_RawMalloc(sizeof(strobe_site) + ln + lp);
    if (!mem) {
      PyErr_NoMemory();
      goto done;
    }
    char *nm = mem + sizeof(strobe_site), *pm = p ? nm + ln : NULL;
    memcpy(nm, n, ln);
    if (p) memcpy(pm, p, lp);
    site = (strobe_site *)mem;
    *site = (strobe_site){nm, "python", pm, "<python>", NULL, 0, STROBE_SITE_STAGE, 0, STROBE_UNIT_NONE, 0};
    PyObject *addr = PyLong_FromVoidPtr(site);
    if (!addr || PyDict_SetItem(g_stage_sites, key, addr) < 0) site = NULL; /* kept: it may be met again */
    Py_XDECREF(addr);
  }
done:
  Py_DECREF(key);
  return site;
}

typedef struct stage_obj {
  PyObject_HEAD
  strobe_site *site;
  strobe_stage h;
  strobe_fiber *fiber; /* the scope stack its capture scope is on */
  int open;
} stage_obj;

static PyTypeObject stage_type;

static PyObject *stage_make(PyTypeObject *type, strobe_site *site) {
  stage_obj *self = (stage_obj *)type->tp_alloc(type, 0);
  if (self) self->site = site;
  return (PyObject *)self;
}

static PyObject *stage_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"name", "parent", NULL};
  PyObject *name, *parent = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:stage", kwlist, &name, &parent)) return NULL;
  strobe_site *site = stage_site(name, parent);
  return site ? stage_make(type, site) : NULL;
}

static PyObject *stage_enter(stage_obj *self, PyObject *unused) {
  (void)unused;
  if (self->open) {
    PyErr_SetString(PyExc_RuntimeError, "this stage is already open: make a new strobe.stage for each with block");
    return NULL;
  }
  if (op_switch() < 0 || (strobe__is_active() && context_enter() < 0)) return NULL;
  self->fiber = strobe_fiber_query_current();
  self->h = strobe_stage_begin(self->site);
  self->open = 1;
  return Py_NewRef(self);
}

static PyObject *stage_exit(stage_obj *self, PyObject *const *args, Py_ssize_t n) {
  (void)args;
  (void)n;
  if (!self->open) Py_RETURN_FALSE;
  self->open = 0;
  if (op_switch() < 0) return NULL;
  /* Its capture scope ends on the stack it began on (as span_end). */
  if (self->h.guard && strobe_fiber_query_current() != self->fiber)
    (void)(self->fiber ? fiber_go(self->fiber) : (thread_go(), 0));
  int rc = strobe_stage_end(&self->h);
  if (rc == STROBE_EINVAL)
    return PyErr_Format(PyExc_RuntimeError, "strobe: a stage ends on the thread that began it");
  Py_RETURN_FALSE;
}

static PyObject *stage_fresh(stage_obj *self, PyObject *unused) {
  (void)unused;
  return stage_make(Py_TYPE(self), self->site);
}

/* @strobe.stage("name"): every call of the function inside a new stage of the same site. */
static PyObject *stage_call(stage_obj *self, PyObject *args, PyObject *kw) {
  PyObject *fn;
  if (kw && PyDict_GET_SIZE(kw)) return PyErr_Format(PyExc_TypeError, "strobe.stage(...) decorates a function");
  if (!PyArg_ParseTuple(args, "O:stage", &fn)) return NULL;
  if (!PyCallable_Check(fn)) return PyErr_Format(PyExc_TypeError, "strobe.stage(...) decorates a function");
  PyObject *fresh = PyObject_GetAttrString((PyObject *)self, "_fresh");
  if (!fresh) return NULL;
  PyObject *name = PyUnicode_FromString(self->site->name);
  PyObject *r = name ? PyObject_CallFunctionObjArgs(g_wrap_span, fresh, name, fn, NULL) : NULL;
  Py_XDECREF(name);
  Py_DECREF(fresh);
  return r;
}

static PyMethodDef stage_methods[] = {
    {"__enter__", (PyCFunction)stage_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))stage_exit, METH_FASTCALL, NULL},
    {"_fresh", (PyCFunction)stage_fresh, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject stage_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.stage",
    .tp_basicsize = sizeof(stage_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "stage(name, parent=None): a stage of the thread's current operation (and a capture scope) for "
              "the with block, or every call of the function it decorates. name: a static label.",
    .tp_new = stage_new,
    .tp_call = (ternaryfunc)stage_call,
    .tp_methods = stage_methods,
};

/* op_counter(name, delta, kind=None): adds to a counter of the thread's current operation. */
static PyObject *py_op_counter(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  static char *kwlist[] = {"name", "delta", "kind", NULL};
  PyObject *name, *kind = Py_None;
  double delta;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|O:op_counter", kwlist, &name, &delta, &kind)) return NULL;
  const char *n, *k;
  if (label_arg(name, "counter name", &n) < 0 || label_arg(kind, "counter kind", &k) < 0) return NULL;
  if (!n) return PyErr_Format(PyExc_TypeError, "strobe: counter name is a str, not None");
  if (op_switch() < 0) return NULL;
  if (k)
    strobe_op_counter_add_kind(n, k, delta);
  else
    strobe_op_counter_add(n, delta);
  Py_RETURN_NONE;
}

/* The session calls behind strobe.Session (__init__.py). */
/* strobe.set_process(label): names this process in session reports and
 * operation tokens (strobe_collector_set_process on the default collector). */
static PyObject *py_set_process(PyObject *mod, PyObject *label) {
  (void)mod;
  const char *s;
  if (label == Py_None) return PyErr_Format(PyExc_TypeError, "strobe: the process label is a str, not None");
  if (label_arg(label, "process label", &s) < 0) return NULL;
  strobe_collector *c = collector();
  if (!c) return NULL;
  int rc = strobe_collector_set_process(c, s);
  if (rc != 0) return raise_rc(rc, "cannot set the process label");
  Py_RETURN_NONE;
}

static PyObject *py_session_start(PyObject *mod, PyObject *args) {
  (void)mod;
  unsigned int max_samples = 0;
  int devtools = 0;
  PyObject *kinds = Py_None;
  if (!PyArg_ParseTuple(args, "IpO:_session_start", &max_samples, &devtools, &kinds)) return NULL;
  strobe_session_desc d = {.max_samples = max_samples, .include_devtools = devtools};
  if (kinds != Py_None) {
    PyObject *it = PyObject_GetIter(kinds);
    if (!it) return NULL;
    for (PyObject *k; (k = PyIter_Next(it)) != NULL;) {
      int n = op_kind_of(k);
      Py_DECREF(k);
      if (n < 0) {
        Py_DECREF(it);
        return NULL;
      }
      d.kinds |= STROBE_KIND_BIT(n);
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) return NULL;
    if (!d.kinds) return PyErr_Format(PyExc_ValueError, "strobe: kinds names no operation kind");
  }
  strobe_collector *c = collector();
  if (!c) return NULL;
  char id[STROBE_SESSION_ID_MAX];
  int rc = strobe_session_start(c, &d, id);
  if (rc != 0) return raise_rc(rc, "cannot start the session");
  return PyUnicode_FromString(id);
}

static PyObject *session_report(PyObject *args, int stop) {
  const char *id;
  if (!PyArg_ParseTuple(args, "s", &id)) return NULL;
  strobe_collector *c = collector();
  if (!c) return NULL;
  strobe_report *r = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = stop ? strobe_session_stop(c, id, 0, &r) : strobe_session_read(c, id, 0, &r);
  Py_END_ALLOW_THREADS
  if (rc != 0) return raise_rc(rc, stop ? "cannot stop the session" : "cannot read the session");
  char *json = NULL;
  size_t len = 0;
  rc = strobe_report_json(r, &json, &len);
  strobe_report_free(r);
  if (rc != 0) return raise_rc(rc, "cannot write the report");
  PyObject *out = PyUnicode_FromStringAndSize(json, (Py_ssize_t)len);
  free(json);
  return out;
}

static PyObject *py_session_read(PyObject *mod, PyObject *args) {
  (void)mod;
  return session_report(args, 0);
}

static PyObject *py_session_stop(PyObject *mod, PyObject *args) {
  (void)mod;
  return session_report(args, 1);
}

/* >>reading: read_capture(path) -> (threads, records), for tests and tools.
 * threads: list of (index, os_tid, name, is_fiber); records: list of
 * (type, thread, site_name, depth, time_ns, duration_ns, value, unwound)
 * for BEGIN, END, VALUE, CUMULATIVE (value: its count), COUNTER and GAUGE. */
static const char *record_type_name(strobe_capture_record_type t) {
  switch (t) {
    case STROBE_REC_BEGIN: return "begin";
    case STROBE_REC_END: return "end";
    case STROBE_REC_VALUE: return "value";
    case STROBE_REC_CUMULATIVE: return "cumulative";
    case STROBE_REC_COUNTER: return "counter";
    case STROBE_REC_GAUGE: return "gauge";
    default: return NULL;
  }
}

static PyObject *py_read_capture(PyObject *mod, PyObject *arg) {
  (void)mod;
  PyObject *path_obj;
  if (!PyUnicode_FSConverter(arg, &path_obj)) return NULL;
  strobe_capture *cap = NULL;
  int rc = strobe_capture_open(PyBytes_AS_STRING(path_obj), &cap);
  Py_DECREF(path_obj);
  if (rc != 0) return PyErr_Format(PyExc_OSError, "strobe: cannot read the capture: %s", strobe_strerror(rc));
  PyObject *records = PyList_New(0), *threads = NULL, *out = NULL;
  if (!records) goto done;
  strobe_capture_record r;
  while ((rc = strobe_capture_next(cap, &r)) > 0) {
    const char *type = record_type_name(r.type);
    if (!type) continue;
    const strobe_capture_site *s = strobe_capture_query_site(cap, r.site);
    double value = r.type == STROBE_REC_CUMULATIVE ? (double)r.count : r.value;
    PyObject *row = Py_BuildValue("(sIsIdddi)", type, r.thread, s ? s->name : "", r.depth, r.time_ns, r.duration_ns,
                                  value, r.unwound);
    if (!row || PyList_Append(records, row) < 0) {
      Py_XDECREF(row);
      goto done;
    }
    Py_DECREF(row);
  }
  if (rc < 0) {
    PyErr_Format(PyExc_OSError, "strobe: the capture is damaged: %s", strobe_strerror(rc));
    goto done;
  }
  threads = PyList_New(0);
  if (!threads) goto done;
  for (uint32_t i = 0; i < strobe_capture_query_thread_count(cap); i++) {
    const strobe_capture_thread *t = strobe_capture_query_thread(cap, i);
    if (!t) continue;
    PyObject *row = Py_BuildValue("(IKsO)", t->index, (unsigned long long)t->os_tid, t->name,
                                  t->os_tid == 0 ? Py_True : Py_False);
    if (!row || PyList_Append(threads, row) < 0) {
      Py_XDECREF(row);
      goto done;
    }
    Py_DECREF(row);
  }
  strobe_capture_totals tot = strobe_capture_query_totals(cap);
  PyObject *totals = Py_BuildValue("{sKsKsKsKsKsK}", "scopes", (unsigned long long)tot.scopes, "unwound",
                                   (unsigned long long)tot.unwound, "lost", (unsigned long long)tot.lost, "unfinished",
                                   (unsigned long long)tot.unfinished, "unbalanced",
                                   (unsigned long long)tot.misuse.unbalanced, "end_without_begin",
                                   (unsigned long long)tot.misuse.end_without_begin);
  if (totals) out = Py_BuildValue("(OON)", threads, records, totals);
done:
  Py_XDECREF(records);
  Py_XDECREF(threads);
  strobe_capture_close(cap);
  return out;
}

/* >>module */
static PyObject *py_stats(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  strobe_misuse m = strobe_query_misuse();
  return Py_BuildValue("{sKsKsKsKsKsKsKsI}", "fibers_made", (unsigned long long)g_fibers_made, "fibers_refused",
                       (unsigned long long)g_fibers_refused, "profile_cut", (unsigned long long)g_profile_cut,
                       "mismatched", (unsigned long long)g_mismatched, "resumptions_unfollowed",
                       (unsigned long long)g_resumptions_unfollowed, "unbalanced", (unsigned long long)m.unbalanced,
                       "end_without_begin", (unsigned long long)m.end_without_begin, "generators_followed",
                       (unsigned)PyDict_GET_SIZE(g_gens));
}

/* event_stats(): the process's event counts since the library loaded (strobe_query_event_stats). */
static PyObject *py_event_stats(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  strobe_event_stats e = strobe_query_event_stats();
  return Py_BuildValue("{sKsKsKsIsI}", "events_written", (unsigned long long)e.events_written, "events_lost",
                       (unsigned long long)e.events_lost, "scopes_unwound", (unsigned long long)e.scopes_unwound,
                       "threads_seen", e.threads_seen, "rings_grown", e.rings_grown);
}

/* setup(overflow="drop", ring_events=0): strobe_setup before anything records (ring_events: a power of
 * two, 1024..16777216, 0: default); ValueError for a bad one, strobe.Error STROBE_EBUSY afterwards. */
static PyObject *py_setup(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  static char *kwlist[] = {"overflow", "ring_events", NULL};
  const char *overflow = "drop";
  unsigned int ring_events = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|sI:setup", kwlist, &overflow, &ring_events)) return NULL;
  strobe_desc d = {.ring_events = ring_events};
  int mode = -1;
#define OVERFLOW_MATCH(id, number, name) \
  if (!strcmp(overflow, name)) mode = number;
  STROBE_OVERFLOW_MODES(OVERFLOW_MATCH)
#undef OVERFLOW_MATCH
  if (mode < 0) return PyErr_Format(PyExc_ValueError, "strobe.setup: overflow is \"drop\", \"grow\" or \"wait\"");
  d.overflow = (uint32_t)mode;
  int rc = strobe_setup(&d);
  if (rc != 0) return raise_rc(rc, "cannot set up (call strobe.setup before anything records)");
  Py_RETURN_NONE;
}

static PyObject *py_recording(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyBool_FromLong(strobe__is_active());
}

static PyObject *py_set_wrap(PyObject *mod, PyObject *fn) {
  (void)mod;
  Py_XSETREF(g_wrap_span, Py_NewRef(fn));
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"value", (PyCFunction)(void (*)(void))py_value, METH_FASTCALL,
     "value(key, number): a number (int or float) on the innermost open span."},
    {"current_span", py_current_span, METH_NOARGS,
     "current_span(): the innermost open span, whose set(name, number) puts a number on it."},
    {"read_capture", py_read_capture, METH_O, "read_capture(path) -> (threads, records, totals)."},
    {"stats", py_stats, METH_NOARGS, "The binding's own counts (fibers made and refused, calls cut) and misuse."},
    {"event_stats", py_event_stats, METH_NOARGS,
     "event_stats(): events written and lost, scopes unwound, threads seen, rings grown since the library loaded."},
    {"setup", (PyCFunction)(void (*)(void))py_setup, METH_VARARGS | METH_KEYWORDS,
     "setup(overflow=\"drop\", ring_events=0): what a full ring does (\"drop\", \"grow\", \"wait\") and each "
     "thread ring's size in events (a power of two, 1024..16777216; 0: default); before anything records."},
    {"recording", py_recording, METH_NOARGS, "True while a capture, flight recorder or live stream records."},
    {"_trace_region", py_trace_region, METH_O, NULL},
    {"_trace_c_calls", py_trace_c_calls, METH_O, NULL},
    {"_trace_all_set", py_trace_all_set, METH_VARARGS, NULL},
    {"_profile_thread", (PyCFunction)(void (*)(void))py_profile_thread, METH_FASTCALL, NULL},
    {"_set_wrap", py_set_wrap, METH_O, NULL},
    {"op_counter", (PyCFunction)(void (*)(void))py_op_counter, METH_VARARGS | METH_KEYWORDS,
     "op_counter(name, delta, kind=None): adds to a counter of the thread's current operation."},
    {"set_process", py_set_process, METH_O,
     "set_process(label): names this process in session reports and operation tokens (a static label)."},
    {"_session_start", py_session_start, METH_VARARGS, NULL},
    {"_session_read", py_session_read, METH_VARARGS, NULL},
    {"_session_stop", py_session_stop, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_strobe", "libstrobe for Python (python/README.md).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__strobe(void) {
  if (PyType_Ready(&span_type) < 0 || PyType_Ready(&cumulative_type) < 0 || PyType_Ready(&recorder_type) < 0 ||
      PyType_Ready(&flight_type) < 0 || PyType_Ready(&fiber_type) < 0 || PyType_Ready(&window_type) < 0 ||
      PyType_Ready(&op_type) < 0 || PyType_Ready(&stage_type) < 0 || PyType_Ready(&current_type) < 0)
    return NULL;
  if (!g_stage_sites && !(g_stage_sites = PyDict_New())) return NULL;
  if (!g_error && !(g_error = PyErr_NewExceptionWithDoc("strobe.Error",
                                                        "A libstrobe refusal: .code (its number), .name (STROBE_E...).",
                                                        PyExc_RuntimeError, NULL)))
    return NULL;
  for (size_t k = 0; k < sizeof g_sites / sizeof g_sites[0]; k++)
    if (!g_sites[k] && !(g_sites[k] = PyDict_New())) return NULL;
  if (!g_code_sites && !(g_code_sites = PyDict_New())) return NULL;
  if (!g_gens && !(g_gens = PyDict_New())) return NULL;
  if (!g_c_sites && !(g_c_sites = PyDict_New())) return NULL;
  if (!g_fiber_var && !(g_fiber_var = PyContextVar_New("strobe_fiber", NULL))) return NULL;
  if (!g_op_var && !(g_op_var = PyContextVar_New("strobe_operation", NULL))) return NULL;
  if (!g_asyncio_events && !(g_asyncio_events = PyUnicode_InternFromString("asyncio.events"))) return NULL;
  if (!g_asyncio_tasks && !(g_asyncio_tasks = PyUnicode_InternFromString("asyncio.tasks"))) return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
  if (PyModule_AddObjectRef(m, "span", (PyObject *)&span_type) < 0 ||
      PyModule_AddObjectRef(m, "cumulative", (PyObject *)&cumulative_type) < 0 ||
      PyModule_AddObjectRef(m, "Recorder", (PyObject *)&recorder_type) < 0 ||
      PyModule_AddObjectRef(m, "FlightRecorder", (PyObject *)&flight_type) < 0 ||
      PyModule_AddObjectRef(m, "Window", (PyObject *)&window_type) < 0 ||
      PyModule_AddObjectRef(m, "operation", (PyObject *)&op_type) < 0 ||
      PyModule_AddObjectRef(m, "stage", (PyObject *)&stage_type) < 0 ||
      PyModule_AddObjectRef(m, "Error", g_error) < 0 ||
      PyModule_AddStringConstant(m, "library_version", strobe_version()) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  g_module = m;
  return m;
}
