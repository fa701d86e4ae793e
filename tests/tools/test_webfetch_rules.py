"""``WebFetch(domain:HOST)`` rules: what a host pattern covers, and the gate's walk for WebFetch.

As Claude Code: ``domain:H`` is the host H (case and a trailing dot aside),
``domain:*.H`` the hosts below H, ``domain:*`` every host, and ``*`` any text
within one label. Read for deny and ask (``subdomains``), ``domain:H`` covers
the hosts below H too; it never covers a host that merely ends in H's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import PermissionPolicy, ToolContext
from coterie.tools.permissions.rules import RuleError, host_matches, parse_rule
from coterie.tools.web import WebFetchTool

if TYPE_CHECKING:
    from pathlib import Path

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
host = st.lists(label, min_size=1, max_size=4).map(".".join)
path = st.sampled_from(["/", "/a/b", "/x?y=1", ":8443/p"])


@given(host, path, st.booleans())
def test_a_host_pattern_covers_its_host_however_spelled(name: str, rest: str, sub: bool) -> None:
    rule = parse_rule(f"WebFetch(domain:{name})")
    assert rule.matches_url(f"https://{name}{rest}", subdomains=sub)
    assert rule.matches_url(f"http://{name.upper()}.{rest}", subdomains=sub)


@given(host, label, path)
def test_a_host_below_is_covered_only_when_asked_for_subdomains(
    name: str, front: str, rest: str
) -> None:
    rule = parse_rule(f"WebFetch(domain:{name})")
    below = f"https://{front}.{name}{rest}"
    assert not rule.matches_url(below, subdomains=False)
    assert rule.matches_url(below, subdomains=True)


@given(host, label, st.booleans())
def test_a_host_merely_ending_in_the_text_is_never_covered(
    name: str, front: str, sub: bool
) -> None:
    assert not host_matches(name, front + name, subdomains=sub)
    assert not host_matches(f"*.{name}", front + name, subdomains=sub)


@given(host, st.lists(label, min_size=1, max_size=3).map(".".join), st.booleans())
def test_a_star_dot_pattern_covers_the_hosts_below_but_not_the_host(
    name: str, front: str, sub: bool
) -> None:
    assert host_matches(f"*.{name}", f"{front}.{name}", subdomains=sub)
    assert not host_matches(f"*.{name}", name, subdomains=sub)


@given(host, host)
def test_a_pattern_never_covers_an_unrelated_host(mine: str, other: str) -> None:
    related = other == mine or other.endswith("." + mine)
    assert host_matches(mine, other, subdomains=True) == related


@given(host)
def test_the_star_covers_every_host(name: str) -> None:
    assert parse_rule("WebFetch(domain:*)").matches_url(f"https://{name}/", subdomains=False)


@pytest.mark.parametrize(
    ("pattern", "host", "covered"),
    [
        ("docs-*.example.com", "docs-v2.example.com", True),
        ("docs-*.example.com", "docs-v2.x.example.com", False),
        ("docs-*.example.com", "api.example.com", False),
        ("EXAMPLE.com.", "example.com", True),
        ("127.0.0.1", "127.0.0.1", True),
        ("127.0.0.1", "127.0.0.2", False),
    ],
)
def test_stars_stay_within_one_label(pattern: str, host: str, covered: bool) -> None:
    assert host_matches(pattern, host) == covered


@pytest.mark.parametrize("text", ["WebFetch(domain:)", "WebFetch(example.com)", "WebFetch(url:x)"])
def test_a_webfetch_rule_must_name_a_host(text: str) -> None:
    with pytest.raises(RuleError, match="domain:HOST"):
        parse_rule(text)


# -- the gate's walk for WebFetch ---------------------------------------------------------


def decide(workspace: Path, url: str, **rules: object) -> str:
    policy = PermissionPolicy.from_rules(**rules)  # type: ignore[arg-type]
    decision = policy.check(WebFetchTool(), {"url": url, "prompt": "?"}, ToolContext(workspace))
    return decision.behavior


def test_the_default_asks(workspace: Path) -> None:
    assert decide(workspace, "https://example.com/") == "ask"


def test_a_domain_rule_allows_denies_or_asks_for_its_host(workspace: Path) -> None:
    url = "http://127.0.0.1:8000/page"
    assert decide(workspace, url, allow=["WebFetch(domain:127.0.0.1)"]) == "allow"
    assert decide(workspace, url, allow=["WebFetch(domain:example.com)"]) == "ask"
    assert decide(workspace, url, deny=["WebFetch(domain:127.0.0.1)"]) == "deny"
    assert decide(workspace, url, ask=["WebFetch(domain:127.0.0.1)"], allow=["WebFetch"]) == "ask"
    both = {"allow": ["WebFetch(domain:127.0.0.1)"], "deny": ["WebFetch(domain:127.0.0.1)"]}
    assert decide(workspace, url, **both) == "deny"


def test_a_deny_rule_covers_the_hosts_below_its_own(workspace: Path) -> None:
    url = "https://docs.example.com/"
    assert decide(workspace, url, deny=["WebFetch(domain:example.com)"]) == "deny"


@pytest.mark.parametrize(
    ("mode", "behavior"),
    [("dontAsk", "deny"), ("bypassPermissions", "allow"), ("plan", "deny"), ("acceptEdits", "ask")],
)
def test_the_modes(workspace: Path, mode: str, behavior: str) -> None:
    assert decide(workspace, "https://example.com/", mode=mode) == behavior
