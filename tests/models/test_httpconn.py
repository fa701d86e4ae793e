"""The thin client's HTTP/1.1 layer against real sockets on 127.0.0.1: keep-alive,
a stale connection replaced once, connect failures, proxies, TLS."""

from __future__ import annotations

import base64
import socket
import ssl
from typing import TYPE_CHECKING

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from coterie.httpconn import Connections, Origin, Proxy, TransportFailure, proxy_for
from tests.models.h11_servers import Answer, Seen, start_origin, start_proxy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

    from coterie.httpconn import Response


async def post(
    conns: Connections, url: str, body: bytes = b"{}", headers: tuple[tuple[str, str], ...] = ()
) -> tuple[Response, bytes]:
    response = await conns.request("POST", url, list(headers), body)
    return response, await response.read(1 << 20)


def scripted(*answers: Answer) -> Callable[[Seen], Answer]:
    """A handler giving *answers* in turn, then plain 200s."""
    queue = list(answers)
    return lambda _: queue.pop(0) if queue else Answer()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def pool() -> AsyncIterator[Callable[..., Connections]]:
    """Connections(...) that are all closed when the test ends."""
    made: list[Connections] = []

    def make(environ: dict[str, str] | None = None, **kw: float) -> Connections:
        made.append(Connections(environ={} if environ is None else environ, **kw))
        return made[-1]

    yield make
    for conns in made:
        await conns.aclose()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) and never says a word."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield int(s.getsockname()[1])


# -- keep-alive -------------------------------------------------------------------


async def test_two_requests_share_one_connection(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, lambda seen: Answer(body=seen.body[::-1]))
    conns = pool()
    first, body1 = await post(conns, origin.url + "/v1/messages?x=1", b"abc", (("x-a", "1"),))
    _, body2 = await post(conns, origin.url + "/v1/messages", b"def")
    await conns.aclose()
    assert (first.status, body1, body2) == (200, b"cba", b"fed")
    assert origin.connections == 1
    assert [(r.connection, r.target) for r in origin.requests] == [
        (1, "/v1/messages?x=1"),
        (1, "/v1/messages"),
    ]
    head = origin.requests[0].headers
    assert (head["host"], head["content-length"], head["x-a"]) == (
        f"127.0.0.1:{origin.port}",
        "3",
        "1",
    )


async def test_a_kept_connection_the_server_closed_is_replaced(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, scripted(Answer(body=b"one", then="close")))
    conns = pool()
    closing = origin.closed
    assert (await post(conns, origin.url))[1] == b"one"
    await closing.wait()  # the server has closed the connection the pool keeps
    response, body = await post(conns, origin.url, b"again")
    await conns.aclose()
    assert (response.status, body) == (200, b"ok")
    assert origin.connections == 2
    assert [(r.connection, r.body) for r in origin.requests] == [(1, b"{}"), (2, b"again")]


async def test_the_stale_connection_is_replaced_only_once(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    # The replacement is dropped too: that failure is the caller's, no third connection.
    origin = await start_origin(
        nursery, scripted(Answer(then="close"), Answer(then="drop"), Answer(then="drop"))
    )
    conns = pool()
    closing = origin.closed
    await post(conns, origin.url)
    await closing.wait()
    with pytest.raises(TransportFailure) as failed:
        await post(conns, origin.url)
    assert not failed.value.refused
    assert origin.connections == 2


async def test_a_response_not_read_to_its_end_is_not_reused(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, lambda _: Answer(body=b"x" * 100_000))
    conns = pool()
    response = await conns.request("POST", origin.url, [], b"")
    assert response.status == 200
    await response.aclose()  # the body left unread
    _, body = await post(conns, origin.url)
    _, again = await post(conns, origin.url)
    await conns.aclose()
    assert body == again == b"x" * 100_000
    assert [r.connection for r in origin.requests] == [1, 2, 2]


async def test_read_stops_at_its_limit_and_still_drains(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, lambda _: Answer(body=b"0123456789" * 1000))
    conns = pool()
    response = await conns.request("POST", origin.url, [], b"")
    assert await response.read(5) == b"01234"
    await post(conns, origin.url)
    await conns.aclose()
    assert origin.connections == 1  # read to its end, so kept


async def test_connection_close_from_the_server_is_honoured(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, lambda _: Answer(headers=(("connection", "close"),)))
    conns = pool()
    await post(conns, origin.url)
    await post(conns, origin.url)
    assert origin.connections == 2


# -- failures to connect ----------------------------------------------------------


async def test_a_refused_connection_says_so(pool: Callable[..., Connections]) -> None:
    port = closed_port()
    with pytest.raises(TransportFailure, match=f"127.0.0.1:{port}.*refused") as failed:
        await pool().request("POST", f"http://127.0.0.1:{port}/", [], b"")
    assert failed.value.refused


async def test_a_connect_that_never_completes_times_out(
    silent_port: int, autojump_clock: trio.abc.Clock, pool: Callable[..., Connections]
) -> None:
    # TCP connects (the kernel accepts it) but the TLS handshake is never answered.
    conns = pool(connect_timeout=7)
    start = trio.current_time()
    with pytest.raises(TransportFailure, match=r"timed out after 7 s") as failed:
        await conns.request("POST", f"https://127.0.0.1:{silent_port}/", [], b"")
    assert trio.current_time() - start == pytest.approx(7)
    assert not failed.value.refused


async def test_a_proxy_that_never_answers_connect_times_out(
    silent_port: int, autojump_clock: trio.abc.Clock, pool: Callable[..., Connections]
) -> None:
    conns = pool({"https_proxy": f"http://127.0.0.1:{silent_port}"}, connect_timeout=3)
    with pytest.raises(TransportFailure, match=f"127.0.0.1:{silent_port} timed out"):
        await conns.request("POST", "https://api.example.invalid/v1/messages", [], b"")


async def test_a_server_that_drops_a_fresh_connection_is_a_failure(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, lambda _: Answer(then="drop"))
    with pytest.raises(TransportFailure, match=rf"127.0.0.1:{origin.port}\b.*closed"):
        await post(pool(), origin.url)
    assert origin.connections == 1


# -- proxies ----------------------------------------------------------------------


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


async def test_http_goes_through_the_proxy_in_absolute_form(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    proxy = await start_proxy(nursery)
    conns = pool({"http_proxy": f"http://us%40er:p%3Ass@127.0.0.1:{proxy.port}"})
    url = "http://api.example.invalid:8080/v1/messages?beta=true"
    response, body = await post(conns, url, b"payload")
    _, _ = await post(conns, "http://api.example.invalid/")
    assert (response.status, body) == (200, b"from the proxy")
    first, second = proxy.requests
    assert (first.method, first.target, first.body) == ("POST", url, b"payload")
    assert first.headers["host"] == "api.example.invalid:8080"
    assert first.headers["proxy-authorization"] == basic("us@er", "p:ss")
    assert (second.target, second.headers["host"]) == (
        "http://api.example.invalid/",
        "api.example.invalid",
    )


async def test_a_proxy_without_credentials_gets_no_authorization(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    proxy = await start_proxy(nursery)
    await post(pool({"ALL_PROXY": f"127.0.0.1:{proxy.port}"}), "http://a.invalid/")
    assert proxy.requests[0].target == "http://a.invalid/"
    assert "proxy-authorization" not in proxy.requests[0].headers


async def test_https_asks_the_proxy_for_a_tunnel(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    proxy = await start_proxy(nursery)  # refuses tunnels with 403
    conns = pool({"HTTPS_PROXY": f"http://u:pw@127.0.0.1:{proxy.port}"})
    with pytest.raises(TransportFailure) as failed:
        await conns.request("POST", "https://api.example.invalid/v1/messages", [], b"secret")
    assert f"127.0.0.1:{proxy.port}" in str(failed.value)
    assert "403" in str(failed.value)
    assert not failed.value.refused
    (connect,) = proxy.requests
    assert (connect.method, connect.target) == ("CONNECT", "api.example.invalid:443")
    assert connect.headers["host"] == "api.example.invalid:443"
    assert connect.headers["proxy-authorization"] == basic("u", "pw")
    assert connect.body == b""  # nothing of the request itself reached the proxy


async def test_no_proxy_goes_direct(
    nursery: trio.Nursery, pool: Callable[..., Connections]
) -> None:
    proxy = await start_proxy(nursery)
    origin = await start_origin(nursery)
    environ = {"http_proxy": proxy.url, "no_proxy": "localhost, 127.0.0.1"}
    _, body = await post(pool(environ), origin.url + "/direct")
    assert body == b"ok"
    assert [r.target for r in origin.requests] == ["/direct"]
    assert proxy.requests == []
    del environ["no_proxy"]
    _, body = await post(pool(environ), origin.url + "/proxied")
    assert body == b"from the proxy"
    assert [r.target for r in proxy.requests] == [f"{origin.url}/proxied"]


async def test_an_unsupported_proxy_is_a_failure_naming_the_way_out(
    pool: Callable[..., Connections],
) -> None:
    conns = pool({"https_proxy": "socks5://127.0.0.1:1080"})
    with pytest.raises(TransportFailure, match="COTERIE_MODEL_CLIENT=sdk"):
        await conns.request("POST", "https://api.example.invalid/", [], b"")


# -- proxy_for and NO_PROXY -------------------------------------------------------

labels = st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?\Z")
domains = st.lists(labels, min_size=1, max_size=3).map(".".join)
schemes = st.sampled_from(["http", "https"])
ports = st.integers(1, 65535)
PROXY = "http://proxy.invalid:3128"


@st.composite
def cased(draw: st.DrawFn, text: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c for c in text)


def origin(scheme: str, host: str, port: int | None = None) -> Origin:
    return Origin(scheme, host, port or (443 if scheme == "https" else 80))


@given(schemes, domains.filter(lambda d: not d.endswith("test")), st.data())
def test_no_proxy_covers_a_domain_and_its_subdomains(
    scheme: str, domain: str, data: st.DataObject
) -> None:
    spelling = data.draw(st.sampled_from(["", ".", "*."])) + data.draw(cased(domain))
    # Other entries under a name the domain never ends with: none of them covers it.
    others = data.draw(st.lists(domains.map(lambda d: d + ".test"), max_size=2))
    no_proxy = ", ".join([*others, spelling, *others])
    environ = {f"{scheme}_proxy": PROXY, "no_proxy": no_proxy}
    sub = data.draw(st.lists(labels, max_size=2).map(lambda ls: "".join(f"{x}." for x in ls)))
    host = data.draw(cased(sub + domain))
    assert proxy_for(origin(scheme, host), environ) is None
    # A name that merely ends with the same letters is another domain.
    assert proxy_for(origin(scheme, "x" + domain), environ) is not None
    assert proxy_for(origin(scheme, domain + "x"), environ) is not None


@given(schemes, domains, ports, ports)
def test_a_no_proxy_port_limits_the_bypass_to_that_port(
    scheme: str, domain: str, listed: int, used: int
) -> None:
    environ = {f"{scheme}_proxy": PROXY, "no_proxy": f"{domain}:{listed}"}
    bypassed = proxy_for(origin(scheme, domain, used), environ) is None
    assert bypassed == (listed == used)


@given(schemes, domains, st.lists(domains, max_size=3), st.data())
def test_a_star_covers_every_host(
    scheme: str, host: str, others: list[str], data: st.DataObject
) -> None:
    entries = [*others]
    entries.insert(data.draw(st.integers(0, len(entries))), "*")
    environ = {f"{scheme}_proxy": PROXY, "NO_PROXY": ",".join(entries)}
    assert proxy_for(origin(scheme, host), environ) is None


@given(schemes, domains, st.data())
def test_variable_names_in_either_case_lowercase_first(
    scheme: str, host: str, data: st.DataObject
) -> None:
    # As curl documents: lowercase first. Unlike curl, HTTP_PROXY in capitals counts
    # too (curl reads http_proxy only in lowercase); the SDK's httpx reads it, so the
    # thin client keeps what the SDK path did.
    lower = "http://lower.invalid:1"
    upper = "http://upper.invalid:2"
    specific = data.draw(st.sampled_from([f"{scheme}_proxy", "all_proxy"]))
    both = data.draw(st.booleans())
    environ = {specific.upper(): upper}
    if both:
        environ[specific] = lower
    proxy = proxy_for(origin(scheme, host), environ)
    assert proxy is not None
    assert proxy.origin.host == ("lower.invalid" if both else "upper.invalid")
    # NO_PROXY too: lowercase first.
    environ.update({"no_proxy": "other.invalid", "NO_PROXY": host})
    assert proxy_for(origin(scheme, host), environ) is not None
    del environ["no_proxy"]
    assert proxy_for(origin(scheme, host), environ) is None


@given(domains)
def test_the_scheme_picks_its_variable_then_all_proxy(host: str) -> None:
    environ = {"https_proxy": "http://s.invalid", "all_proxy": "http://a.invalid:9"}
    assert proxy_for(origin("https", host), environ) == Proxy(Origin("http", "s.invalid", 80))
    assert proxy_for(origin("http", host), environ) == Proxy(Origin("http", "a.invalid", 9))
    assert proxy_for(origin("http", host), {}) is None


def test_no_proxy_spellings() -> None:
    environ = {"https_proxy": PROXY, "no_proxy": " Example.COM. , ,10.0.0.1:443,::1"}
    assert proxy_for(origin("https", "api.example.com"), environ) is None
    assert proxy_for(origin("https", "example.com."), environ) is None
    assert proxy_for(origin("https", "10.0.0.1"), environ) is None
    assert proxy_for(origin("https", "10.0.0.1", 8443), environ) is not None
    assert proxy_for(origin("https", "::1"), environ) is None
    assert proxy_for(origin("https", "notexample.com"), environ) is not None


# -- TLS --------------------------------------------------------------------------


@pytest.fixture
def trusted_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """A test CA the client trusts through ``SSL_CERT_FILE`` (which
    ``ssl.create_default_context()`` reads, through OpenSSL, when it is called)."""
    import trustme  # a test dependency (pyproject's test extra)

    ca = trustme.CA()
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    monkeypatch.setenv("SSL_CERT_FILE", str(path))
    return ca


def server_context(ca: object) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)  # type: ignore[attr-defined]
    return context


async def test_https_with_a_trusted_certificate(
    nursery: trio.Nursery, trusted_ca: object, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, tls=server_context(trusted_ca))
    conns = pool()
    _, body = await post(conns, origin.url + "/v1/messages")
    _, again = await post(conns, origin.url + "/v1/messages")
    await conns.aclose()
    assert body == again == b"ok"
    assert origin.connections == 1
    assert origin.requests[0].headers["host"] == f"127.0.0.1:{origin.port}"


async def test_https_with_an_untrusted_certificate_fails(
    nursery: trio.Nursery, trusted_ca: object, pool: Callable[..., Connections]
) -> None:
    import trustme

    origin = await start_origin(nursery, tls=server_context(trustme.CA()))  # another CA
    with pytest.raises(TransportFailure, match="certificate") as failed:
        await post(pool(), origin.url)
    assert not failed.value.refused


async def test_https_through_a_proxy_tunnel(
    nursery: trio.Nursery, trusted_ca: object, pool: Callable[..., Connections]
) -> None:
    origin = await start_origin(nursery, tls=server_context(trusted_ca))
    proxy = await start_proxy(nursery, tunnels=True)
    conns = pool({"https_proxy": proxy.url})
    url = f"https://localhost:{origin.port}/v1/messages"  # the proxy resolves it, not us
    _, body = await post(conns, url, b"through")
    _, again = await post(conns, url)
    await conns.aclose()
    assert body == again == b"ok"
    assert [(r.method, r.target) for r in proxy.requests] == [
        ("CONNECT", f"localhost:{origin.port}")
    ]
    assert [(r.target, r.body, r.connection) for r in origin.requests] == [
        ("/v1/messages", b"through", 1),
        ("/v1/messages", b"{}", 1),
    ]
    assert origin.requests[0].headers["host"] == f"localhost:{origin.port}"
