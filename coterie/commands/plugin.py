"""``coterie plugin …``: marketplaces and installed plugins, as ``claude plugin …`` has them.

``marketplace add SOURCE`` (a folder, a ``marketplace.json``, a git URL or a
GitHub ``owner/name``), ``marketplace list|remove|update``, ``install
NAME@MARKETPLACE``, ``uninstall``, ``enable``, ``disable`` and ``list``. The
state is Claude Code's (:mod:`coterie.extensions.marketplaces`,
:mod:`coterie.extensions.installed`); each command holds a lock on it, so two
at once never interleave their writes, and while it holds it, git commands a
killed one left running are ended (their process groups are recorded in the
coterie home). Bad input is one line and exit 2; a git or disk failure exit 1.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

    from rich.console import Console

    from coterie.extensions.marketplaces import Known

__all__ = ["add_plugin_command", "plugin_command", "plugin_listing"]

_SCOPES = ("user", "project", "local")


def add_plugin_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``coterie plugin`` (alias ``plugins``) to the CLI's subcommands."""
    plugin = sub.add_parser(
        "plugin",
        aliases=["plugins"],
        help="manage plugin marketplaces and installed plugins",
        description=(
            "Add marketplaces (catalogues of plugins), install plugins from them and turn"
            " them on or off. Installed plugins load in every run whose settings enable"
            " them (enabledPlugins); a project's settings count only once it is trusted."
        ),
    )
    verbs = plugin.add_subparsers(dest="plugin_command", metavar="COMMAND", required=True)
    market = verbs.add_parser("marketplace", help="manage marketplaces")
    mverbs = market.add_subparsers(dest="marketplace_command", metavar="COMMAND", required=True)
    add = mverbs.add_parser("add", help="add a marketplace from a folder, a git URL or owner/repo")
    add.add_argument("source", metavar="SOURCE")
    _scope(add, "where to declare the marketplace (default: user)")
    mlist = mverbs.add_parser("list", help="list the marketplaces")
    remove = mverbs.add_parser("remove", aliases=["rm"], help="remove a marketplace")
    remove.add_argument("name", metavar="NAME")
    _scope(remove, "remove its declaration from this settings scope only")
    update = mverbs.add_parser("update", help="read marketplaces again from their source")
    update.add_argument("name", nargs="?", metavar="NAME")
    for parser in (add, mlist, remove, update):
        parser.add_argument("--json", action="store_true", help="one JSON result on stdout")
    install = verbs.add_parser("install", aliases=["i"], help="install a plugin")
    install.add_argument("plugin", metavar="PLUGIN", help="NAME@MARKETPLACE (or NAME)")
    _scope(install, "installation scope (default: user)", short=True)
    uninstall = verbs.add_parser("uninstall", aliases=["remove"], help="uninstall a plugin")
    uninstall.add_argument("plugin", metavar="PLUGIN")
    _scope(uninstall, "uninstall from this scope (default: user)", short=True)
    uninstall.add_argument("--keep-data", action="store_true", help="keep its data folder")
    enable = verbs.add_parser("enable", help="enable an installed plugin")
    enable.add_argument("plugin", metavar="PLUGIN")
    _scope(enable, "settings scope (default: where it is named, else its install's)", short=True)
    disable = verbs.add_parser("disable", help="disable an enabled plugin")
    disable.add_argument("plugin", nargs="?", metavar="PLUGIN")
    disable.add_argument("-a", "--all", action="store_true", help="disable every enabled plugin")
    _scope(disable, "settings scope (default: where it is named, else its install's)", short=True)
    plist = verbs.add_parser("list", help="list installed plugins")
    for parser in (install, uninstall, enable, disable, plist):
        parser.add_argument("--json", action="store_true", help="one JSON result on stdout")


def _trusted(folder: Path) -> bool:
    from coterie.trust import is_trusted

    return is_trusted(folder)


def _scope(parser: argparse.ArgumentParser, text: str, *, short: bool = False) -> None:
    names = ("-s", "--scope") if short else ("--scope",)
    parser.add_argument(
        *names, choices=_SCOPES, metavar="SCOPE", help=f"{text}: user, project or local"
    )


@contextlib.contextmanager
def _state() -> Iterator[Path]:
    """Hold the plugin commands' lock; the folder to record git's process groups in.
    A command killed before it could end its git leaves the groups recorded: whoever
    holds the lock next ends them."""
    from coterie import procgroups
    from coterie.home import coterie_home, private_dir

    folder = private_dir(coterie_home() / "plugins")
    with open(folder / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        procgroups.reap_run(folder)
        yield procgroups.records_dir(folder)


def plugin_command(args: argparse.Namespace, console: Console, err: Console) -> int:
    """Run ``coterie plugin …``; the exit code."""
    import trio
    from rich.markup import escape

    from coterie.extensions.marketplaces import MarketplaceError
    from coterie.extensions.plugins import PluginError
    from coterie.workspaces.git import GitError

    try:
        with _state() as records:
            said = trio.run(_dispatch, args, Path.cwd(), records)
    except (MarketplaceError, PluginError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    except (GitError, OSError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 1
    if getattr(args, "scope", None) in ("project", "local") and _trusted(Path.cwd()):
        # The trust record approved the workspace's settings as they were.
        err.print(
            f"[yellow]hint:[/] this workspace's {args.scope} settings changed: `coterie trust"
            f" {escape(shlex.quote(str(Path.cwd())))}` approves them as they are now",
            soft_wrap=True,
        )
    if getattr(args, "json", False) and not isinstance(said, str):
        console.file.write(json.dumps(said) + "\n")
    elif isinstance(said, str):
        console.print(escape(said), soft_wrap=True, highlight=False)
    else:
        console.print(escape(json.dumps(said, indent=2)), soft_wrap=True, highlight=False)
    return 0


async def _dispatch(args: argparse.Namespace, cwd: Path, records: Path) -> Any:
    from coterie.extensions import installed as inst

    verb = args.plugin_command
    if verb == "marketplace":
        return await _marketplace(args, cwd, records)
    if verb in ("install", "i"):
        done = await inst.install(args.plugin, args.scope or "user", cwd, records)
        if args.json:
            return {"ok": True, "id": done.id, "scope": done.scope, **done.to_json()}
        return f"Installed {done.id} {done.version} ({done.scope} scope) in {done.path}"
    if verb in ("uninstall", "remove"):
        gone = inst.uninstall(args.plugin, args.scope or "user", cwd, keep_data=args.keep_data)
        return (
            {"ok": True, "id": gone.id, "scope": gone.scope}
            if args.json
            else (f"Uninstalled {gone.id} ({gone.scope} scope)")
        )
    if verb in ("enable", "disable"):
        on = verb == "enable"
        ids = [args.plugin] if args.plugin else []
        if not on and args.all:
            ids = [p for p in inst.installed() if _state_of(p, cwd)]
        elif not ids:
            raise _bad("disable needs a PLUGIN or --all")
        scopes = [(p, inst.set_enabled(p, args.scope, cwd, on=on)) for p in ids]
        if args.json:
            return {"ok": True, verb + "d": [{"id": p, "scope": s} for p, s in scopes]}
        return "\n".join(f"{verb.capitalize()}d {p} ({s} scope)" for p, s in scopes) or (
            "No plugin is enabled"
        )
    return _installed_list(cwd) if args.json else plugin_listing(cwd)


def _bad(text: str) -> Exception:
    from coterie.extensions.marketplaces import MarketplaceError

    return MarketplaceError(text)


def _state_of(plugin_id: str, cwd: Path) -> bool:
    from coterie.extensions import installed as inst

    states = [inst.setting_of(inst.settings_path(s, cwd), plugin_id) for s in _SCOPES]
    return next((s for s in reversed(states) if s is not None), False)


def _installed_list(cwd: Path) -> list[dict[str, Any]]:
    from coterie.extensions import installed as inst

    return [
        {"id": pid, "enabled": _state_of(pid, cwd), **i.to_json()}
        for pid, items in sorted(inst.installed().items())
        for i in items
    ]


def plugin_listing(cwd: Path) -> str:
    """The installed plugins and the marketplaces, as text (``plugin list``, ``/plugin``)."""
    from coterie.extensions.marketplaces import known_marketplaces

    rows = _installed_list(cwd)
    lines = ["Installed plugins:" if rows else "No plugins installed."]
    for row in rows:
        state = "enabled" if row["enabled"] else "disabled"
        lines.append(f"  {row['id']}  {row['version']}  {row['scope']} scope  {state}")
    known = known_marketplaces()
    lines.append("Marketplaces:" if known else "No marketplaces added.")
    lines.extend(f"  {name}  {k.source.kind} {k.source}" for name, k in sorted(known.items()))
    return "\n".join(lines)


async def _marketplace(args: argparse.Namespace, cwd: Path, records: Path) -> Any:
    from coterie.extensions.marketplaces import known_marketplaces

    verb = args.marketplace_command
    known = known_marketplaces()
    if verb == "list":
        if args.json:
            return [_known_json(k) for k in known.values()]
        lines = [f"  {n}  {k.source.kind} {k.source}" for n, k in sorted(known.items())]
        return "\n".join(["Marketplaces:", *lines]) if lines else "No marketplaces added."
    if verb == "add":
        added = await _add(args.source, args.scope or "user", cwd, known, records)
        return (
            _known_json(added)
            if args.json
            else (f"Added marketplace {added.name} ({added.source.kind} {added.source})")
        )
    if verb in ("remove", "rm"):
        return _remove(args.name, args.scope, cwd, known, as_json=args.json)
    names = [args.name] if args.name else sorted(known)
    for name in names:
        if name not in known:
            raise _bad(f"marketplace {name!r} is not known")
        await _update(known[name], records)
    if args.json:
        return {"ok": True, "updated": names}
    return "\n".join(f"Updated marketplace {n}" for n in names) or "No marketplaces added."


def _known_json(known: Known) -> dict[str, Any]:
    return {"name": known.name, **known.source.to_json(), "installLocation": str(known.location)}


async def _add(text: str, scope: str, cwd: Path, known: dict[str, Known], records: Path) -> Known:
    """Add the marketplace *text* names: read (a git one cloned first) and checked, then
    recorded and declared in the settings of *scope*."""
    import tempfile

    from coterie.extensions.installed import edit_settings, settings_path
    from coterie.extensions.marketplaces import (
        Known,
        git_run,
        now,
        parse_source,
        plugins_dir,
        read_catalogue,
        save_known,
    )

    source = parse_source(text, cwd)
    if not source.is_git:
        catalogue = read_catalogue(Path(source.location))
        location = Path(source.location)
        if catalogue.name in known:
            raise _bad(f"a marketplace named {catalogue.name!r} is already added")
        added = Known(catalogue.name, source, location, now())
    else:
        parent = plugins_dir() / "marketplaces"
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=parent, prefix=".add-"))
        try:
            branch = ("--branch", source.ref) if source.ref else ()
            await git_run(parent, "clone", "--depth", "1", *branch, "--", source.url,
                          str(tmp / "clone"), records=records)  # fmt: skip
            catalogue = read_catalogue(tmp / "clone")
            if catalogue.name in known:
                raise _bad(f"a marketplace named {catalogue.name!r} is already added")
            location = parent / catalogue.name
            if location.exists():
                shutil.rmtree(location)
            (tmp / "clone").rename(location)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        added = Known(catalogue.name, source, location, now())
    save_known({**known, added.name: added})
    try:
        edit_settings(settings_path(scope, cwd), "extraKnownMarketplaces", added.name,
                      {"source": source.to_json()})  # fmt: skip
    except BaseException:
        save_known(known)
        if source.is_git:
            shutil.rmtree(added.location, ignore_errors=True)
        raise
    return added


async def _update(known: Known, records: Path) -> None:
    from coterie.extensions.marketplaces import git_run, known_marketplaces, now, read_catalogue
    from coterie.extensions.marketplaces import save_known as save

    if known.source.is_git:
        ref = known.source.ref or "HEAD"
        await git_run(known.location, "fetch", "--depth", "1", "origin", ref, records=records)
        await git_run(known.location, "reset", "--hard", "FETCH_HEAD", records=records)
    read_catalogue(known.location)  # still a marketplace
    import attrs

    save({**known_marketplaces(), known.name: attrs.evolve(known, updated=now())})


def _remove(
    name: str, scope: str | None, cwd: Path, known: dict[str, Known], *, as_json: bool
) -> Any:
    """Forget marketplace *name*, its clone, and its declaration (in *scope*, or every
    scope); the plugins installed from it are uninstalled."""
    from coterie.extensions import installed as inst
    from coterie.extensions.marketplaces import MarketplaceError, plugins_dir, save_known

    gone = known.get(name)
    declared = [s for s in (_SCOPES if scope is None else (scope,)) if _declares(s, cwd, name)]
    if gone is None and not declared:
        raise _bad(f"marketplace {name!r} is not known")
    for s in declared:
        inst.edit_settings(inst.settings_path(s, cwd), "extraKnownMarketplaces", name, None)
    if gone is not None and scope in (None, "user"):
        save_known({n: k for n, k in known.items() if n != name})
        found = inst.installed()
        removed = [pid for pid in found if pid.endswith(f"@{name}")]
        for pid in removed:
            for item in found[pid]:
                with contextlib.suppress(MarketplaceError):
                    inst.uninstall(pid, item.scope, Path(item.project or cwd))
        if (
            gone is not None
            and gone.source.is_git
            and gone.location.parent == plugins_dir() / "marketplaces"
        ):
            shutil.rmtree(gone.location, ignore_errors=True)
        shutil.rmtree(plugins_dir() / "cache" / name, ignore_errors=True)
    return {"ok": True, "removed": name} if as_json else f"Removed marketplace {name}"


def _declares(scope: str, cwd: Path, name: str) -> bool:
    from coterie.extensions import installed as inst
    from coterie.extensions.marketplaces import read_json

    data = read_json(inst.settings_path(scope, cwd), {})
    section = data.get("extraKnownMarketplaces") if isinstance(data, dict) else None
    return isinstance(section, dict) and name in section
