"""The Workflow tool in process: its inputs, its errors, resuming by run id, and its
agents started as subagents with their options."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from coterie.tools import ToolContext, ToolResult
from coterie.tools.task import UnknownSubagentType
from coterie.tools.workflow import WorkflowTool, saved_workflows

if TYPE_CHECKING:
    from pathlib import Path

META = "export const meta = {name: 'pair', description: 'two agents'}\n"
PAIR = META + "const a = await agent('first', {label: 'one'})\n"
PAIR += "const b = await agent('second')\nreturn [a, b]"


class Subagents:
    """A fake ``ToolContext.subagents``: answers each prompt's first line upper-cased."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    async def __call__(
        self, description: str, prompt: str, kind: str, *, schema: Any = None, model: Any = None
    ) -> ToolResult:
        if kind not in ("general-purpose", "Explore"):
            raise UnknownSubagentType(kind)  # as the runtime's starter does
        first = prompt.splitlines()[0]
        self.calls.append(
            {
                "description": description,
                "prompt": first,
                "kind": kind,
                "schema": schema,
                "model": model,
            }
        )
        if first == self.fail:
            return ToolResult("it crashed", is_error=True)
        if schema is not None:
            return ToolResult(json.dumps({"said": first}))
        return ToolResult(first.upper())


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return ToolContext(
        workspace=workspace, subagents=Subagents(), workflows=tmp_path / "run" / "workflows"
    )


async def run(ctx: ToolContext, **input: Any) -> ToolResult:
    return await WorkflowTool().run(input, ctx)


def run_id(result: ToolResult) -> str:
    return result.content.split("Run id: ")[1].split(".")[0]


async def test_the_result_is_the_scripts_value_with_the_run_id(ctx: ToolContext) -> None:
    result = await run(ctx, script=PAIR)
    assert not result.is_error, result.content
    assert 'Workflow "pair" completed (2 agents ran)' in result.content
    assert json.loads(result.content.split("Result:\n")[1]) == ["FIRST", "SECOND"]
    assert ctx.workflows is not None
    assert (ctx.workflows / run_id(result) / "script.js").read_text() == PAIR


async def test_an_agents_options_reach_its_subagent(ctx: ToolContext) -> None:
    schema = {"type": "object", "properties": {"said": {"type": "string"}}}
    options = f"label: 'lab', agentType: 'Explore', model: 'haiku', schema: {json.dumps(schema)}"
    script = META + f"return await agent('x', {{{options}}})"
    result = await run(ctx, script=script)
    assert json.loads(result.content.split("Result:\n")[1]) == {"said": "x"}
    (call,) = ctx.subagents.calls  # type: ignore[union-attr]
    assert call == {
        "description": "lab",
        "prompt": "x",
        "kind": "Explore",
        "schema": schema,
        "model": "haiku",
    }


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ("{isolation: 'worktree'}", "opts.isolation is not available"),
        ("{schema: {type: 'string'}}", "agent(): opts.schema must describe a JSON object"),
        ("{agentType: 'nope'}", "unknown agentType 'nope'"),
    ],
)
async def test_a_bad_agent_option_throws_in_the_script(
    ctx: ToolContext, options: str, says: str
) -> None:
    script = META + f"try {{ await agent('x', {options}) }} catch (e) {{ return e.message }}"
    result = await run(ctx, script=script)
    assert says in result.content


async def test_a_failed_workflow_names_how_to_resume_it_and_resuming_reuses_what_finished(
    ctx: ToolContext,
) -> None:
    ctx.subagents = Subagents(fail="second")
    failing = PAIR.replace(
        "return [a, b]", "if (b === null) throw new Error('second failed')\nreturn [a, b]"
    )
    failed = await run(ctx, script=failing)
    assert failed.is_error
    assert "second failed" in failed.content
    first = run_id(failed)
    assert f'Workflow({{resumeFromRunId: "{first}"}})' in failed.content
    ctx.subagents = Subagents()
    resumed = await run(ctx, resumeFromRunId=first)
    assert "1 agent ran, 1 answer reused from run " + first in resumed.content
    assert [c["prompt"] for c in ctx.subagents.calls] == ["second"]


async def test_a_resume_may_take_an_edited_script_from_a_file(ctx: ToolContext) -> None:
    first = run_id(await run(ctx, script=PAIR))
    (ctx.workspace / "edited.js").write_text(PAIR.replace("return [a, b]", "return {a, b}"))
    ctx.subagents = Subagents()
    result = await run(ctx, scriptPath="edited.js", resumeFromRunId=first)
    assert json.loads(result.content.split("Result:\n")[1]) == {"a": "FIRST", "b": "SECOND"}
    assert ctx.subagents.calls == []


async def test_the_same_call_after_an_interruption_resumes_the_unfinished_run(
    ctx: ToolContext,
) -> None:
    """A workflow cut short (no end in its journal) is taken up by the same call again."""
    assert ctx.workflows is not None
    first = run_id(await run(ctx, script=PAIR, args={"n": 1}))
    journal = ctx.workflows / first / "journal.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:2]) + "\n")  # the start and the first answer
    ctx.subagents = Subagents()
    result = await run(ctx, script=PAIR, args={"n": 1})
    assert f"1 agent ran, 1 answer reused from run {first}" in result.content
    other = await run(ctx, script=PAIR, args={"n": 2})  # other args: a fresh run
    assert "2 agents ran)" in other.content


@pytest.mark.parametrize(
    ("input", "says"),
    [
        ({}, "Give the workflow as script, scriptPath or name"),
        ({"script": PAIR, "name": "x"}, "Give one of script, scriptPath and name"),
        ({"script": "return 1"}, "cannot run: the script must begin with `export const meta"),
        ({"script": META + "const = 1"}, "cannot run: the script does not parse"),
        ({"resumeFromRunId": "wf0000000000"}, "No workflow run 'wf0000000000'"),
        ({"resumeFromRunId": "../../etc"}, "No workflow run '../../etc'"),
        ({"scriptPath": "/etc/hostname"}, "outside the workspace"),
        ({"name": "missing"}, "No saved workflow named 'missing'"),
    ],
)
async def test_bad_input_is_an_error_result(
    ctx: ToolContext, input: dict[str, Any], says: str
) -> None:
    result = await run(ctx, **input)
    assert result.is_error
    assert says in result.content


async def test_a_saved_workflow_runs_by_its_meta_name(ctx: ToolContext, tmp_path: Path) -> None:
    saved = ctx.workspace / ".claude" / "workflows"
    saved.mkdir(parents=True)
    (saved / "file-name.js").write_text(PAIR.replace("name: 'pair'", "name: 'saved-pair'"))
    (saved / "broken.js").write_text("not a workflow")
    assert list(saved_workflows(ctx.workspace, home=tmp_path / "nohome")) == ["saved-pair"]
    result = await run(ctx, name="saved-pair")
    assert 'Workflow "saved-pair" completed' in result.content


async def test_without_subagents_or_a_run_there_is_no_workflow(tmp_path: Path) -> None:
    assert "nesting limit" in (await run(ToolContext(workspace=tmp_path), script=PAIR)).content
    bare = ToolContext(workspace=tmp_path, subagents=Subagents())
    assert "no run keeps them" in (await run(bare, script=PAIR)).content


async def test_a_call_with_no_input_gets_the_whole_reference(ctx: ToolContext) -> None:
    """The description sent with every request is short; the reference comes on demand."""
    result = await run(ctx)
    assert "Workflow reference." in result.content
    assert "pipeline(items, stage1, stage2, ...)" in result.content
    assert len(WorkflowTool.description) < len(result.content) / 2
