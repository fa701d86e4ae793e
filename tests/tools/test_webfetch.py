"""WebFetch in process: URLs, redirects, the caps, the cache and the side call.

The pages come from a site on 127.0.0.1 served from a thread (``webpages``);
the side call is a stand-in recording what it was asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from coterie.errors import CoterieError
from coterie.tools import ToolContext
from coterie.tools.web import WebFetchTool
from coterie.tools.web.fetch import PageCache
from coterie.tools.web.page import NotText, page_text, window
from coterie.tools.web.urls import Follow, Refused, Report, follow_redirect, plan_url
from tests.tools.webpages import AWAY, Site, serve

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.tools._base import SideQuestion

site = pytest.fixture(serve)


@attrs.define
class Answers:
    """A stand-in for the run's model: records each side question, answers one line."""

    asked: list[SideQuestion] = attrs.field(factory=list)
    fail: bool = False

    async def __call__(self, question: SideQuestion) -> str:
        self.asked.append(question)
        if self.fail:
            raise CoterieError("529 overloaded_error: try later")
        return "The page says the answer is 42."


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def ctx(workspace: Path, answers: Answers) -> ToolContext:
    return ToolContext(workspace=workspace, ask_model=answers)


async def fetch(tool: WebFetchTool, ctx: ToolContext, url: str, **more: Any) -> Any:
    return await tool.run({"url": url, "prompt": "What is the answer?", **more}, ctx)


# -- which URL, which redirect ---------------------------------------------------------


def test_http_is_upgraded_to_https_but_for_this_machine() -> None:
    assert plan_url("http://example.com/a?b=1#frag") == Follow("https://example.com/a?b=1")
    assert plan_url("http://127.0.0.1:8000/x") == Follow("http://127.0.0.1:8000/x")
    assert plan_url("http://localhost/") == Follow("http://localhost/")
    assert plan_url("http://[::1]:9/") == Follow("http://[::1]:9/")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "not an http"),
        ("ftp://example.com/f", "not an http"),
        ("https://user:secret@example.com/", "password"),
        ("https://intranet/wiki", "no dot"),
        ("https://example.com/" + "a" * 2000, "at most 2000"),
        ("https://", "names no host"),
        ("https://example.com:port/", "not a valid URL"),
    ],
)
def test_urls_webfetch_refuses(url: str, why: str) -> None:
    refused = plan_url(url)
    assert isinstance(refused, Refused)
    assert why in refused.reason


@pytest.mark.parametrize(
    ("current", "location", "expected"),
    [
        ("https://a.example/x", "/y", Follow("https://a.example/y")),
        ("https://a.example/x", "https://www.a.example/y", Follow("https://www.a.example/y")),
        ("https://www.a.example/x", "https://a.example/y#top", Follow("https://a.example/y")),
        ("https://a.example/x", "https://b.example/y", Report("https://b.example/y")),
        ("https://a.example/x", "http://a.example/y", Report("http://a.example/y")),
        ("https://a.example/x", "https://a.example:8443/y", Report("https://a.example:8443/y")),
        ("https://a.example/x", "https://sub.a.example/y", Report("https://sub.a.example/y")),
    ],
)
def test_a_redirect_is_followed_only_on_the_same_origin(
    current: str, location: str, expected: Follow | Report
) -> None:
    assert follow_redirect(current, location) == expected


def test_a_redirect_to_a_refused_url_is_refused() -> None:
    assert isinstance(follow_redirect("https://a.example/", "file:///etc/passwd"), Refused)


_label = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
_host = st.lists(_label, min_size=2, max_size=4).map(".".join)


@given(_host, _host, st.sampled_from(["/", "/deep/path?q=1"]))
def test_a_followed_redirect_never_leaves_the_host(here: str, there: str, path: str) -> None:
    """Whatever the two hosts, a redirect is followed only to the same one (``www.`` aside)."""
    step = follow_redirect(f"https://{here}/start", f"https://{there}{path}")
    same = here.removeprefix("www.") == there.removeprefix("www.")
    assert isinstance(step, Follow) == same
    assert isinstance(step, Report) != same


# -- the page as text ----------------------------------------------------------------


def test_html_becomes_markdown_of_its_main_content() -> None:
    from tests.tools.webpages import PAGE

    text = page_text(PAGE, "text/html; charset=utf-8")
    assert "# The test page" in text
    assert "Hello from the test page: the answer is 42." in text
    assert "- first item" in text
    for gone in ("About", "Sidebar link", "Copyright", "tracking", "color: red", "<p>"):
        assert gone not in text


def test_text_and_json_are_kept_and_binaries_refused() -> None:
    assert page_text(b'{"a": 1}', "application/json") == '{"a": 1}'
    assert page_text("caf\xe9".encode("latin-1"), "text/plain; charset=latin-1") == "caf\xe9"
    with pytest.raises(NotText, match="image/png"):
        page_text(b"\x89PNG", "image/png")
    with pytest.raises(NotText):
        page_text(b"\0\1\2", "")


def test_a_window_reads_from_its_offset() -> None:
    part = window("abcdefghij", 4, 3)
    assert (part.text, part.start, part.end, part.total, part.more) == ("efg", 4, 7, 10, True)
    assert not window("abc", 0, 10).more
    with pytest.raises(ValueError, match="past the end"):
        window("abc", 3, 10)


# -- the tool against a local site ---------------------------------------------------


async def test_the_model_is_asked_about_the_page(
    site: Site, ctx: ToolContext, answers: Answers
) -> None:
    result = await fetch(WebFetchTool(), ctx, site.url("/page"))
    assert result.content == "The page says the answer is 42."
    assert not result.is_error
    (question,) = answers.asked
    assert question.purpose == "webfetch"
    assert "Hello from the test page: the answer is 42." in question.prompt
    assert question.prompt.endswith("What is the answer?")
    assert "About" not in question.prompt


async def test_without_a_model_the_result_is_the_page(site: Site, workspace: Path) -> None:
    result = await fetch(WebFetchTool(), ToolContext(workspace=workspace), site.url("/page"))
    assert "Hello from the test page" in result.content


async def test_a_same_host_redirect_is_followed(site: Site, ctx: ToolContext) -> None:
    result = await fetch(WebFetchTool(), ctx, site.url("/moved"))
    assert result.content == "The page says the answer is 42."
    assert site.hits["/moved"] == 1
    assert site.hits["/page"] == 1


async def test_an_off_host_redirect_is_reported_not_followed(
    site: Site, ctx: ToolContext, answers: Answers
) -> None:
    result = await fetch(WebFetchTool(), ctx, site.url("/away"))
    assert not result.is_error
    assert AWAY in result.content
    assert "another host" in result.content
    assert answers.asked == []


async def test_a_page_over_the_size_cap_is_cut(site: Site, workspace: Path) -> None:
    tool = WebFetchTool(max_bytes=1000)
    result = await fetch(tool, ToolContext(workspace=workspace), site.url("/big?bytes=5000"))
    assert "only its first 1000 bytes were read" in result.content
    assert "TAIL" not in result.content
    assert result.content.count("x") == 1000


async def test_a_long_page_is_read_in_parts(site: Site, workspace: Path) -> None:
    tool, ctx = WebFetchTool(max_chars=3000), ToolContext(workspace=workspace)
    first = await fetch(tool, ctx, site.url("/big?bytes=7000"))
    assert "characters 0 to 3000 of the page's 7000" in first.content
    assert "offset 3000" in first.content
    last = await fetch(tool, ctx, site.url("/big?bytes=7000"), offset=6000)
    assert last.content.startswith("x" * 996 + "TAIL")
    assert "To read on" not in last.content
    past = await fetch(tool, ctx, site.url("/big?bytes=7000"), offset=7000)
    assert past.is_error


async def test_failures_are_results_the_model_reads(site: Site, ctx: ToolContext) -> None:
    tool = WebFetchTool()
    missing = await fetch(tool, ctx, site.url("/missing"))
    assert missing.is_error
    assert "HTTP 404" in missing.content
    image = await fetch(tool, ctx, site.url("/image"))
    assert image.is_error
    assert "not a text page (image/png)" in image.content
    closed = await fetch(tool, ctx, "http://127.0.0.1:9/nothing-listens")
    assert closed.is_error
    assert "failed" in closed.content


async def test_the_time_cap_ends_a_fetch(site: Site, ctx: ToolContext) -> None:
    result = await fetch(WebFetchTool(timeout=0.3), ctx, site.url("/hang"))
    assert result.is_error
    assert "longer than 0.3 seconds" in result.content


async def test_cancelling_the_call_cancels_the_fetch(site: Site, ctx: ToolContext) -> None:
    started = trio.current_time()
    with trio.move_on_after(0.3) as scope:
        await fetch(WebFetchTool(), ctx, site.url("/hang"))
    assert scope.cancelled_caught
    assert trio.current_time() - started < 5


async def test_a_failed_side_call_is_an_error_result(
    site: Site, ctx: ToolContext, answers: Answers
) -> None:
    answers.fail = True
    result = await fetch(WebFetchTool(), ctx, site.url("/page"))
    assert result.is_error
    assert "asking the model about it failed: 529 overloaded_error" in result.content


async def test_pages_are_kept_for_a_while(site: Site, ctx: ToolContext) -> None:
    now = [0.0]
    tool = WebFetchTool(cache=PageCache(ttl=900, clock=lambda: now[0]))
    await fetch(tool, ctx, site.url("/page"))
    now[0] = 899
    await fetch(tool, ctx, site.url("/page"))
    assert site.hits["/page"] == 1
    now[0] = 900
    await fetch(tool, ctx, site.url("/page"))
    assert site.hits["/page"] == 2


def test_the_cache_drops_the_oldest_pages_past_its_size() -> None:
    from coterie.tools.web.fetch import Fetched

    cache = PageCache(max_chars=10, clock=lambda: 0.0)
    for name in "abc":
        cache.put(name, Fetched(name, 200, "text/plain", b"12345"))
    assert [cache.get(n) is not None for n in "abc"] == [False, True, True]
