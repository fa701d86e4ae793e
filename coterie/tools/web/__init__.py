"""The web tools: WebFetch and WebSearch (docs/engine.md).

This folder owns reading a web page for the model: which URL is fetched and
which redirects are followed (:mod:`~coterie.tools.web.urls`, pure), the
fetch itself with its size and time caps and a short cache
(:mod:`~coterie.tools.web.fetch`), the page as text
(:mod:`~coterie.tools.web.page`) and the tool
(:mod:`~coterie.tools.web.tool`); and searching the web through Anthropic's
server-side search tool in a side call (:mod:`~coterie.tools.web.search`).
Who may fetch which host (``WebFetch(domain:HOST)`` rules) or search at all
(``WebSearch``) is the permission gate's, never this folder's; the model the
tools ask is the runtime's (``ToolContext.ask_model``).
"""

from coterie.tools.web.search import WebSearchTool
from coterie.tools.web.tool import WebFetchTool

__all__ = ["WebFetchTool", "WebSearchTool"]
