"""strobe.wsgi — owns the WSGI middleware that makes every request an
operation (python/README.md, Web frameworks): kind "request" on the window
"app" (or the one given), its population the route template's label (a
Flask or Werkzeug url_map's rule), with the stages routing (finding the
rule), handler (until the application returns its body) and response
(until the server has taken the body and closed it).

Must never: record the URL, query string, headers or body of a request
(only the rule, a static label of the program), change what the
application sends or receives, or swallow its exceptions.
"""
from . import _web
from ._strobe import op_counter, operation, stage

__all__ = ["Middleware"]


class Middleware:
    """Middleware(app, window="app", url_map=None, route=None): wraps a WSGI
    application. A Flask application's own url_map is used when it is the
    app (strobe.wsgi.Middleware(flask_app)), or pass url_map (werkzeug's
    Map) or route(environ) -> template or None (population "unmatched").
    Runs on whatever thread the server gives each request: each request's
    operation is its thread's (or its context's)."""

    def __init__(self, app, window="app", url_map=None, route=None):
        self.app = app
        self.window = _web.window(window)
        self.url_map = url_map if url_map is not None else getattr(app, "url_map", None)
        self.route = route if route is not None else self._werkzeug_route
        self._population = _web.Populations(self.route)

    def _werkzeug_route(self, environ):
        if self.url_map is None:
            return None
        try:
            rule, _ = self.url_map.bind_to_environ(environ).match(return_rule=True)
        except Exception:  # werkzeug's NotFound, MethodNotAllowed, RequestRedirect
            return None
        return rule.rule

    def __call__(self, environ, start_response):
        stages = _web.Stages(stage)
        op = operation("request", window=self.window)
        op.__enter__()
        try:
            stages.enter("routing")
            op.set_population(self._population(environ))
            stages.enter("handler")

            def timed_start(status, headers, exc_info=None):
                op_counter("status", 1, kind=f"s{status[:1]}xx")
                return start_response(status, headers, exc_info)

            body = self.app(environ, timed_start)
            stages.enter("response")
        except BaseException as e:
            stages.close()
            op.__exit__(type(e), e, e.__traceback__)
            raise
        return _Body(body, op, stages)


class _Body:
    """The application's body, handed to the server: the response stage and
    the operation end when the server closes it (PEP 3333)."""

    def __init__(self, body, op, stages):
        self._body, self._op, self._stages = body, op, stages
        self._failed = None

    def __iter__(self):
        try:
            yield from self._body
        except BaseException as e:
            self._failed = e
            raise

    def close(self):
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._stages.close()
            e = self._failed
            self._op.__exit__(type(e) if e else None, e, e.__traceback__ if e else None)
