"""Claude Code's extension files: custom subagents, skills and slash commands.

This package owns reading them: the frontmatter of their Markdown files
(:mod:`~coterie.extensions.frontmatter`), the subagent definitions of
``.claude/agents/*.md``, ``~/.claude/agents/*.md`` and ``--agents JSON``
(:mod:`~coterie.extensions.agents`), the skills of
``.claude/skills/<name>/SKILL.md`` (:mod:`~coterie.extensions.skills`), the
commands of ``.claude/commands/**/*.md`` and their expansion
(:mod:`~coterie.extensions.commands`), the plugins of ``--plugin-dir``
(:mod:`~coterie.extensions.plugins`: their manifests, parts, hooks and MCP
servers: imported from that module, ``load_plugins``), and the one place a
run loads them all (:func:`load_extensions`).
They are prompts, never permissions: what they say about tools and modes can
only narrow what the run may do, and a workspace's own files load only once
the workspace is trusted. A plugin is the user's choice on the command line,
never a workspace's: nothing in a workspace adds one.
"""

from coterie.extensions.agents import AgentDefinition, AgentsError, parse_agents_json
from coterie.extensions.commands import CommandDefinition, CommandError, Expansion, expand
from coterie.extensions.frontmatter import FrontmatterError, parse_frontmatter
from coterie.extensions.loading import Extensions, load_extensions
from coterie.extensions.skills import SkillDefinition

__all__ = [
    "AgentDefinition",
    "AgentsError",
    "CommandDefinition",
    "CommandError",
    "Expansion",
    "Extensions",
    "FrontmatterError",
    "SkillDefinition",
    "expand",
    "load_extensions",
    "parse_agents_json",
    "parse_frontmatter",
]
