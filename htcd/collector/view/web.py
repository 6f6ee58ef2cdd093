"""The view's page and its static files, for the collector's HTTP endpoint: ``/view/`` is
``static/index.html``; ``/view/static/NAME`` is a file of ``static/`` (the page's script and style
and the vendored uPlot).  Files are read from the installed package, so the page works offline;
only names listed in the directory are served, so no path can leave it."""

from __future__ import annotations

from functools import cache
from importlib import resources

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".LICENSE": "text/plain; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}
PREFIX = "/view/static/"


@cache
def _files() -> dict[str, bytes]:
    """Name -> contents of every file of ``static/`` (read once: they are part of the install)."""
    root = resources.files(__package__).joinpath("static")
    return {entry.name: entry.read_bytes() for entry in root.iterdir() if entry.is_file()}


def content_type(name: str) -> str:
    for suffix, ctype in CONTENT_TYPES.items():
        if name.endswith(suffix):
            return ctype
    return "application/octet-stream"


def serve(path: str) -> tuple[int, str, bytes]:
    """(status, content type, body) for a GET of ``path`` (without the query): the page for
    ``/view`` and ``/view/``, a static file under ``/view/static/``, else 404 with the reason."""
    if path in ("/view", "/view/", "/view/index.html"):
        return 200, CONTENT_TYPES[".html"], _files()["index.html"]
    if path.startswith(PREFIX):
        name = path[len(PREFIX):]
        body = _files().get(name)
        if body is not None:
            return 200, content_type(name), body
        return 404, "text/plain; charset=utf-8", (
            f"no such file {name!r} under /view/static/ (there are: {', '.join(sorted(_files()))})\n"
        ).encode()
    return 404, "text/plain; charset=utf-8", f"no such page {path}; the view is at /view/\n".encode()
