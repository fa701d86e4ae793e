"""Output styles, as Claude Code has them: what they are and which one a run uses (sans-io).

An output style changes how the agent answers, not what it can do. The
built-in ones are ``default`` (coterie's own prompt, unchanged),
``Proactive``, ``Concise``, ``Explanatory`` and ``Learning`` (Claude Code's
names; the wording of their instructions is coterie's own). A custom style is
a Markdown file in ``output-styles/`` of the user's Claude folder
(``~/.claude``, or ``$CLAUDE_CONFIG_DIR``) or of a trusted workspace's
``.claude``: its body is the style's instructions, its frontmatter may say
``name`` (default: the file's name without ``.md``), ``description`` and
``keep-coding-instructions`` (default false). A project's style shadows the
user's of the same name, and either a built-in. A plugin's styles (its
``output-styles/*.md``, :meth:`coterie.extensions.plugins.Plugins.style_files`)
are named after it, ``plugin:style``, as Claude Code names them, so they
shadow no one's.

What a style does to the system prompt (:func:`coterie.agent.build_system_prompt`):
any style but ``default`` drops the "be brief" part of coterie's prompt and
adds its own instructions at its end; a custom style also drops the coding
part (read before editing, check your work...) unless it says
``keep-coding-instructions: true``, so that a writing assistant is not told
to run tests. The built-ins keep it: they are ways of coding.

The settings' ``outputStyle`` names the style, exactly (as in Claude Code);
a name no style has is one notice, and the run answers in ``default``. Runs
still report the name the settings gave (Claude Code's ``system/init`` echoes
it verbatim, and SDK hosts check it). ``/output-style NAME`` finds a name
whatever its case.

Parsing is lenient: unknown frontmatter keys are ignored; a file that cannot
be read as a style (frontmatter that does not parse, not UTF-8) is skipped
with one notice naming it. Nothing here touches the file system: the loader
(:mod:`coterie.extensions.loading`) reads the files and hands over their text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from coterie.extensions.frontmatter import FrontmatterError, parse_frontmatter

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

__all__ = [
    "BUILTIN_STYLES",
    "DEFAULT_STYLE",
    "OutputStyle",
    "choose_style",
    "find_style",
    "parse_style",
    "styles_from_files",
    "switch_reminder",
]

#: The name of the style that changes nothing.
DEFAULT_STYLE: Final = "default"


@attrs.frozen
class OutputStyle:
    """One output style: its name, what it says it is, and its instructions."""

    name: str
    description: str = ""
    #: The text added to the system prompt ("" for ``default``).
    instructions: str = ""
    #: Whether coterie's coding instructions stay in the prompt.
    keep_coding_instructions: bool = False
    #: ``built-in``, ``user``, ``project`` or ``plugin``.
    source: str = "built-in"
    #: The file it was read from (None for a built-in).
    path: Path | None = attrs.field(default=None, eq=False)

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_STYLE


_PROACTIVE = """\
The person wants the work done without stopping to ask. Start at once; when \
a routine choice has a sensible answer, take it, say in one line what you \
assumed, and go on. Do not write a plan first unless asked to. Treat a \
correction that arrives while you work as ordinary input. This changes how \
you work, not what you may do: permissions still apply, and anything that \
deletes data, touches shared systems or sends something outside still needs \
the person's word."""

_CONCISE = """\
The person wants short answers. Open with the outcome or the answer; leave \
out preamble, step-by-step narration and closing recaps. Answer a simple \
question in a few plain sentences; use lists or tables only when the content \
is a list or a table. Skip hedging unless the caveat changes what the person \
should do. When asked for detail, give all of it. Brevity never hides an \
error, a failing test or a risk: report those in full."""

_INSIGHTS = """\
While you work, teach. Before and after a piece of code, add a short note \
headed "Insight" with two or three points about why it is built this way: a \
choice you made, a pattern of this codebase, a trade-off. Keep the notes in \
the conversation, never in the code, and about this project rather than \
programming in general."""

_EXPLANATORY = f"""\
You help with software engineering and explain as you go, so the person \
understands the codebase and your choices; the task still comes first.

{_INSIGHTS}"""

_LEARNING = f"""\
You help with software engineering in a learn-by-doing way: the person \
writes some of the code.

When a change has a piece worth learning from (a design decision, business \
logic with several sound answers, a key algorithm or interface) of a few \
lines, do not write that piece. Put one TODO(human) marker in the code where \
it goes, using your editing tools, then ask the person to write it: say what \
is already built and why the piece matters, which function or section in \
which file to complete, and what to weigh. Then stop and wait for them; \
after they are done, connect what they wrote to the rest of the system in a \
sentence or two. Only one TODO(human) at a time. If you keep a todo list, \
give the person's piece its own item.

{_INSIGHTS}"""

#: The built-in styles, in the order Claude Code lists them.
BUILTIN_STYLES: Final[tuple[OutputStyle, ...]] = (
    OutputStyle(DEFAULT_STYLE, "coterie's own prompt, for getting software work done"),
    OutputStyle("Proactive", "act at once on reasonable assumptions", _PROACTIVE, True),
    OutputStyle("Concise", "short answers that lead with the result", _CONCISE, True),
    OutputStyle("Explanatory", "explains choices and codebase patterns", _EXPLANATORY, True),
    OutputStyle("Learning", "asks you to write small pieces of code", _LEARNING, True),
)

_TRUE: Final = frozenset({"true", "yes", "on", "1"})


def parse_style(text: str, stem: str, source: str, path: Path | None = None) -> OutputStyle:
    """The style a file holds (*stem*: its name without ``.md``); a
    :class:`~coterie.extensions.FrontmatterError` if its frontmatter does not parse."""
    meta, body = parse_frontmatter(text)
    name = meta.get("name")
    description = meta.get("description")
    keep = meta.get("keep-coding-instructions")
    return OutputStyle(
        name=name.strip() if isinstance(name, str) and name.strip() else stem,
        description=description.strip() if isinstance(description, str) else "",
        instructions=body.strip(),
        keep_coding_instructions=isinstance(keep, str) and keep.strip().lower() in _TRUE,
        source=source,
        path=path,
    )


def styles_from_files(
    files: Iterable[tuple[str, Path, str | None]],
) -> tuple[dict[str, OutputStyle], tuple[str, ...]]:
    """The styles a run knows, by name: the built-ins, then each of *files*
    (``(source, path, text)``, the user's before the project's, a later one
    shadowing an earlier of the same name; text None: it could not be read as
    UTF-8 text), with one notice per file skipped. A source ``plugin:NAME`` is
    plugin NAME's: its style is named ``NAME:style``."""
    styles = {style.name: style for style in BUILTIN_STYLES}
    notices: list[str] = []
    for source, path, text in files:
        if text is None:
            notices.append(f"output style not loaded: {path}: not UTF-8 text")
            continue
        stem = path.name[:-3] if path.name.endswith(".md") else path.name
        kind, _, plugin = source.partition(":")
        try:
            style = parse_style(text, stem, kind, path)
        except FrontmatterError as exc:
            notices.append(f"output style not loaded: {path}: {exc}")
            continue
        if kind == "plugin":
            style = attrs.evolve(style, name=f"{plugin}:{style.name}")
        styles[style.name] = style
    return styles, tuple(notices)


def choose_style(
    name: str | None, styles: Mapping[str, OutputStyle]
) -> tuple[OutputStyle, str | None]:
    """The style the settings' ``outputStyle`` *name* names (None: ``default``),
    exactly as spelt, and the notice when no style has that name (``default``
    is used then)."""
    default = styles.get(DEFAULT_STYLE, BUILTIN_STYLES[0])
    if name is None or name == DEFAULT_STYLE:
        return default, None
    style = styles.get(name)
    if style is not None:
        return style, None
    known = ", ".join(styles)
    return default, f"output style {name!r} not found (known: {known}); using {DEFAULT_STYLE}"


def find_style(name: str, styles: Mapping[str, OutputStyle]) -> OutputStyle | None:
    """The style a person typed (``/output-style NAME``): its exact name, else
    the one name that matches it ignoring case."""
    if name in styles:
        return styles[name]
    folded = [style for key, style in styles.items() if key.casefold() == name.casefold()]
    return folded[0] if len(folded) == 1 else None


def switch_reminder(style: OutputStyle) -> str:
    """What the next prompt carries after ``/output-style`` switched to *style* in a
    conversation: the system prompt is the run's and stays as it is (so that the
    API's prompt cache holds), so the switch is said in the conversation, as
    Claude Code says it."""
    if style.is_default:
        said = (
            "The person switched the output style back to default: from now on answer in"
            " coterie's own way, and set aside the instructions of any style named earlier."
        )
    else:
        said = (
            f"The person switched the output style to {style.name}: from now on answer in"
            " it, in place of any style named earlier.\n\n"
            f"# Output style: {style.name}\n\n{style.instructions}"
        )
    return f"<system-reminder>\n{said.rstrip()}\n</system-reminder>\n\n"
