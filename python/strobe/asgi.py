"""strobe.asgi — owns the ASGI middleware that makes every HTTP request an
operation (python/README.md, Web frameworks): kind "request" on the window
"app" (or the one given), its population the route template's label, with
the stages routing (finding the route), handler (until the response starts)
and response (until its last body message is sent).

Must never: record the URL, query string, headers or body of a request
(only the route template, a static label of the program), change what the
application sends or receives, or swallow its exceptions.
"""
from . import _web
from ._strobe import op_counter, operation, stage

__all__ = ["Middleware"]


def _starlette_template(routes, scope, prefix=""):
    """The template of the route that matches scope among Starlette routes
    (Mounts searched inside), or None."""
    for route in routes:
        try:
            match, child = route.matches(scope)
        except Exception:  # a route type that cannot match this scope
            continue
        if match.name == "NONE":
            continue
        path = getattr(route, "path", None)
        if path is None:
            continue
        inner = getattr(route, "routes", None)
        if inner:
            sub = dict(scope)
            sub.update(child)
            found = _starlette_template(inner, sub, prefix + path)
            if found is not None:
                return found
        return prefix + path
    return None


def starlette_route(scope):
    """The route template of a Starlette (or FastAPI) application's request,
    from the application in scope["app"] (Starlette puts itself there), or
    None when no route matches."""
    app = scope.get("app")
    routes = getattr(app, "routes", None)
    if routes is None:
        return None
    return _starlette_template(routes, scope)


class Middleware:
    """Middleware(app, window="app", route=starlette_route): wraps an ASGI
    application (Starlette: app.add_middleware(strobe.asgi.Middleware)).
    route(scope) returns the request's route template, or None (no route
    matched: population "unmatched"). Other scope types (lifespan,
    websocket) pass through unrecorded."""

    def __init__(self, app, window="app", route=starlette_route):
        self.app = app
        self.window = _web.window(window)
        self.route = route
        self._population = _web.Populations(self.route)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        stages = _web.Stages(stage)
        with operation("request", window=self.window) as op:
            stages.enter("routing")
            population = self._population(scope)
            stages.enter("handler")

            async def timed_send(message):
                kind = message["type"]
                if kind == "http.response.start":
                    op_counter("status", 1, kind=f"s{message['status'] // 100}xx")
                    stages.enter("response")
                    await send(message)
                elif kind == "http.response.body" and not message.get("more_body", False):
                    await send(message)
                    stages.close()
                else:
                    await send(message)

            try:
                await self.app(scope, receive, timed_send)
            finally:
                stages.close()
                op.set_population(population)
