"""The web tools: WebFetch (docs/engine.md).

This folder owns reading a web page for the model: which URL is fetched and
which redirects are followed (:mod:`~coterie.tools.web.urls`, pure), the
fetch itself with its size and time caps and a short cache
(:mod:`~coterie.tools.web.fetch`), the page as text
(:mod:`~coterie.tools.web.page`) and the tool
(:mod:`~coterie.tools.web.tool`). Who may fetch which host is the permission
gate's (``WebFetch(domain:HOST)`` rules), never this folder's; the model the
tool asks about a page is the runtime's (``ToolContext.ask_model``).
"""

from coterie.tools.web.tool import WebFetchTool

__all__ = ["WebFetchTool"]
