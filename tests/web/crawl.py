"""Crawling the app's pages in a real Chromium: the URLs a page's DOM points at, the page
routes filled in with real values, and what a strict Content-Security-Policy is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from app.web.routes import PageRoute

#: Every URL the rendered DOM holds, with what holds it: attributes that load something
#: (``src``, ``srcset``, ``<link href>``, ``poster``, ``<object data>``, SVG ``href``,
#: ``action``/``formaction``, ``background``, ``ping``) as ``load``, ``url(...)`` in ``style``
#: attributes and ``<style>`` elements as ``load``, and ``<a>``/``<area>`` hrefs as ``link``.
DOM_URLS = r"""
() => {
  const found = [];
  const add = (kind, tag, attr, value) => {
    let resolved = value;
    try { resolved = new URL(value, document.baseURI).href; } catch (e) {}
    found.push({kind, tag, attr, value, resolved});
  };
  const urlsInCss = (text) => [...text.matchAll(/url\(\s*(['"]?)(.*?)\1\s*\)|@import\s+(['"])(.*?)\3/g)]
    .map((m) => m[2] || m[4]).filter(Boolean);
  for (const el of document.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    for (const attr of el.getAttributeNames()) {
      const value = el.getAttribute(attr);
      const name = attr.toLowerCase();
      if (name === "srcset" || name === "imagesrcset") {
        for (const part of value.split(",")) {
          const url = part.trim().split(/\s+/)[0];
          if (url) add("load", tag, name, url);
        }
      } else if (name === "style") {
        for (const url of urlsInCss(value)) add("load", tag, name, url);
      } else if (["src", "poster", "data", "action", "formaction", "background", "ping",
                  "xlink:href", "manifest", "codebase"].includes(name)) {
        add("load", tag, name, value);
      } else if (name === "href") {
        add(tag === "a" || tag === "area" ? "link" : "load", tag, name, value);
      }
    }
    if (tag === "style") for (const url of urlsInCss(el.textContent)) add("load", tag, "css", url);
  }
  return found;
}
"""

#: Sources a strict page policy may name: this origin, nothing, a nonce, inline images.
ALLOWED_SOURCES = re.compile(r"^('self'|'none'|'nonce-[A-Za-z0-9_\-+/=]+'|data:)$")
#: Directives every page's policy must have, with the only value each may have.
REQUIRED = {"default-src": ["'none'"], "frame-ancestors": ["'none'"], "base-uri": ["'none'"]}


@dataclass(frozen=True)
class DomUrl:
    """One URL of a page's DOM (see :data:`DOM_URLS`)."""

    kind: str
    tag: str
    attr: str
    value: str
    resolved: str


def dom_urls(found: list[dict[str, Any]]) -> list[DomUrl]:
    """:data:`DOM_URLS`' answer as :class:`DomUrl` items."""
    return [DomUrl(**item) for item in found]


def same_origin(url: str, base_url: str) -> bool:
    """True when ``url`` is on ``base_url``'s origin, or loads nothing from a network
    (``data:``, an in-page ``#fragment``)."""
    parts, base = urlsplit(url), urlsplit(base_url)
    if parts.scheme in ("data", "about", "blob"):
        return True
    return (parts.scheme, parts.netloc) == (base.scheme, base.netloc)


def csp_directives(header: str) -> dict[str, list[str]]:
    """A Content-Security-Policy header as ``{directive: [sources]}``."""
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


def strict_csp_problems(header: str | None) -> list[str]:
    """What is wrong with a page's policy (empty when it is strict): missing, a required
    directive absent or loose, or a source other than :data:`ALLOWED_SOURCES` anywhere."""
    if not header:
        return ["no Content-Security-Policy"]
    directives = csp_directives(header)
    problems = [
        f"{name} is {directives.get(name)}, not {value}"
        for name, value in REQUIRED.items()
        if directives.get(name) != value
    ]
    for name, sources in directives.items():
        problems += [f"{name} allows {s}" for s in sources if not ALLOWED_SOURCES.match(s)]
    return problems


class UnknownParameter(LookupError):
    """A page route names a path or query parameter the crawler has no value for."""


def fill(page: PageRoute, values: dict[str, str]) -> str:
    """``page``'s path with each ``{name}`` replaced by ``values[name]``, plus each of its query
    parameters that ``values`` has (``/search?q=…``, ``/login?code=…``).

    Raises:
        UnknownParameter: a parameter has no value (add one to the crawler's table).
    """
    path = page.path
    for param in page.route.dependant.path_params:
        if param.name not in values:
            raise UnknownParameter(f"{page.path}: no value for path parameter {param.name!r}")
        path = re.sub(r"\{" + re.escape(param.name) + r"(:[^}]*)?\}", values[param.name], path)
    query = {}
    for param in page.route.dependant.query_params:
        name = param.alias or param.name
        if name in values:
            query[name] = values[name]
        elif param.field_info.is_required():
            raise UnknownParameter(f"{page.path}: no value for query parameter {name!r}")
    return f"{path}?{urlencode(query)}" if query else path
