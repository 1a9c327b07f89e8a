"""Light and dark pages: the dark rules of a page's CSS, applied when Airflow's UI (around
the page, in whose iframe it is shown) is in its dark theme, or, outside Airflow and when
Airflow follows the system, when the system prefers dark.

Airflow 3's UI keeps its theme as a class on its ``<html>`` (``light`` or ``dark``) and
the choice in ``localStorage["theme"]`` (``light``, ``dark`` or ``system``). A page the
plugin serves is of the same origin: :data:`THEME_JS` (served by the plugin as
``theme.js``, the only script its pages load) reads the UI's class (else the stored
choice) and sets ``data-theme`` on the page's own ``<html>``, and follows when the user
switches. The CSS of :func:`dark_css` applies the dark rules under ``data-theme="dark"``,
and under the system's preference unless ``data-theme="light"``. A report opened as a file
has no script: it follows the system.
"""

from __future__ import annotations

from collections.abc import Sequence

THEME_JS = """(function () {
  "use strict";
  var root = document.documentElement;
  function host() {
    try {
      return window.parent !== window ? window.parent.document.documentElement : null;
    } catch (e) {
      return null;
    }
  }
  function mode() {
    var h = host();
    if (h && h.classList.contains("dark")) return "dark";
    if (h && h.classList.contains("light")) return "light";
    var stored = null;
    try { stored = window.localStorage.getItem("theme"); } catch (e) { stored = null; }
    return stored === "dark" || stored === "light" ? stored : null;
  }
  function apply() {
    var m = mode();
    if (m) root.setAttribute("data-theme", m); else root.removeAttribute("data-theme");
  }
  apply();
  var h = host();
  if (h && window.MutationObserver) {
    new MutationObserver(apply).observe(h, { attributes: true, attributeFilter: ["class"] });
  }
  window.addEventListener("storage", apply);
})();
"""


def dark_css(rules: Sequence[tuple[str, str]]) -> str:
    """``rules`` (selector, declarations) as the page's dark theme (module doc)."""

    def scoped(prefix: str) -> str:
        return "\n".join(
            ", ".join(f"{prefix} {s.strip()}" for s in selector.split(",")) + f" {{ {decls} }}"
            for selector, decls in rules
        )

    return (
        ":root { color-scheme: light dark; }\n"
        ':root[data-theme="light"] { color-scheme: light; }\n'
        ':root[data-theme="dark"] { color-scheme: dark; }\n'
        "@media (prefers-color-scheme: dark) {\n"
        + scoped(':root:not([data-theme="light"])')
        + "\n}\n"
        + scoped(':root[data-theme="dark"]')
        + "\n"
    )
