"""_web.py — owns what strobe.asgi and strobe.wsgi share: the window their
requests run on, and the rule that turns a route template into a
population label (python/README.md, Web frameworks).

Must never: look at a request's URL, query string or headers to name
anything (only the framework's route template, a static label of the
program), or register one window id twice.
"""
import re

from ._strobe import Window

_windows = {}


def window(window_id):
    """The strobe.Window of that id, registered once per process for every
    middleware that names it."""
    w = _windows.get(window_id)
    if w is None:
        w = _windows[window_id] = Window(window_id)
    return w


_CONVERTER = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")  # werkzeug's <int:id> -> id
_NOT_LABEL = re.compile(r"[^A-Za-z0-9_]+")


def route_label(template):
    """A route template ("/items/{id}", "/items/<int:id>") as a population
    label (1-64 of [A-Za-z0-9_]): "items_id"; "/" is "root". Two templates
    that differ only by punctuation share a label."""
    text = _CONVERTER.sub(r"\1", template)
    label = _NOT_LABEL.sub("_", text).strip("_")[:64].rstrip("_")
    return label or "root"


class Populations:
    """A request's population from route(request) -> template or None
    ("unmatched"), each template's label made once."""

    def __init__(self, route):
        self._route = route
        self._labels = {}

    def __call__(self, request):
        template = self._route(request)
        if template is None:
            return "unmatched"
        label = self._labels.get(template)
        if label is None:
            label = self._labels[template] = route_label(template)
        return label


class Stages:
    """The three stages of a request, begun and ended as the server's
    callbacks arrive: routing, then handler until the response starts, then
    response until its last byte is handed to the server."""

    def __init__(self, stage):
        self._stage = stage
        self._open = None

    def enter(self, name):
        self.close()
        self._open = self._stage(name)
        self._open.__enter__()

    def close(self):
        if self._open is not None:
            opened, self._open = self._open, None
            opened.__exit__(None, None, None)
