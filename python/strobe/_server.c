/*
 * _server.c — strobe.serve(): the embedded server (include/strobe/server.h;
 * docs/server.md) started from Python, so an agent can profile a Python
 * service over MCP and /api/sessions, and the viewer can watch it live. A
 * module of its own, linked against libstrobe_server, so that the recording
 * module (_strobe.c) never pulls in the HTTP server.
 *
 * Owns: the Server type (start, port, token file, stop).
 * Must never: bind anything but what the caller asked (default 127.0.0.1),
 * print or return a generated token (it is in the 0600 token file), or keep
 * a server running after stop() or the object's collection.
 *
 * Thread rule: every entry point runs with the GIL held; the server's own
 * threads never call into Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "strobe/server.h"
#include "strobe/strobe.h"

typedef struct server_obj {
  PyObject_HEAD
  strobe_server *srv;
} server_obj;

static PyObject *server_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"port", "bind", "token", "token_file", "quiet", NULL};
  unsigned int port = 0;
  const char *bind = NULL, *token = NULL, *token_file = NULL;
  int quiet = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|Izzzp:Server", kwlist, &port, &bind, &token, &token_file, &quiet))
    return NULL;
  if (port > 65535) return PyErr_Format(PyExc_ValueError, "strobe.serve: port %u is no TCP port", port);
  strobe_server_desc d = {.bind_address = bind, .port = (uint16_t)port, .token = token, .token_file = token_file,
                          .quiet = quiet};
  strobe_server *srv = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = strobe_server_start(&d, &srv);
  Py_END_ALLOW_THREADS
  if (rc != 0)
    return PyErr_Format(rc == STROBE_EINVAL ? PyExc_ValueError : PyExc_OSError, "strobe.serve: %s (%s)",
                        strobe_strerror(rc), strobe_err_name(rc));
  server_obj *self = (server_obj *)type->tp_alloc(type, 0);
  if (!self) {
    strobe_server_stop(srv);
    return NULL;
  }
  self->srv = srv;
  return (PyObject *)self;
}

static void server_stop_now(server_obj *self) {
  strobe_server *srv = self->srv;
  self->srv = NULL;
  if (!srv) return;
  Py_BEGIN_ALLOW_THREADS
  strobe_server_stop(srv);
  Py_END_ALLOW_THREADS
}

static PyObject *server_stop(server_obj *self, PyObject *unused) {
  (void)unused;
  server_stop_now(self);
  Py_RETURN_NONE;
}

static void server_dealloc(server_obj *self) {
  server_stop_now(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *server_get_port(server_obj *self, void *c) {
  (void)c;
  if (!self->srv) Py_RETURN_NONE;
  return PyLong_FromLong(strobe_server_query_port(self->srv));
}

static PyObject *server_get_token_file(server_obj *self, void *c) {
  (void)c;
  const char *f = self->srv ? strobe_server_query_token_file(self->srv) : NULL;
  if (!f) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(f);
}

static PyObject *server_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *server_exit(server_obj *self, PyObject *const *args, Py_ssize_t n) {
  (void)args;
  (void)n;
  server_stop_now(self);
  Py_RETURN_FALSE;
}

static PyMethodDef server_methods[] = {
    {"stop", (PyCFunction)server_stop, METH_NOARGS,
     "Stops serving: connections close, sessions started over MCP or /api/sessions are cancelled, a token file "
     "it wrote is removed."},
    {"__enter__", server_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))server_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef server_getset[] = {
    {"port", (getter)server_get_port, NULL, "The TCP port it listens on (None once stopped).", NULL},
    {"token_file", (getter)server_get_token_file, NULL,
     "The 0600 file holding the token it generated, or None (a token was given, or $STROBE_TOKEN).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject server_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "strobe.Server",
    .tp_basicsize = sizeof(server_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Server(port=0, bind=None, token=None, token_file=None, quiet=False): the embedded server "
              "(HTTP API, MCP, viewer) on the default collector, until stop() or the with block's end.",
    .tp_new = server_new,
    .tp_dealloc = (destructor)server_dealloc,
    .tp_methods = server_methods,
    .tp_getset = server_getset,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_server", "libstrobe_server for Python (python/README.md, Server).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__server(void) {
  if (PyType_Ready(&server_type) < 0) return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (m && PyModule_AddObjectRef(m, "Server", (PyObject *)&server_type) < 0) Py_CLEAR(m);
  return m;
}
