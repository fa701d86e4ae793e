// One query() of the TypeScript Agent SDK with a canUseTool callback, run by
// tests/sdk/test_typescript_sdk.py.
//
//   node can_use_tool.mjs SDK_DIR EXECUTABLE CWD PROMPT allow|deny
//
// SDK_DIR is where the pinned SDK was installed (it holds node_modules);
// EXECUTABLE is handed to the SDK as pathToClaudeCodeExecutable (a path not
// ending in .js/.mjs is spawned directly, not through node). The child's
// environment is this process's. Writes one JSON line per message the SDK
// yields ({"message": ...}), then {"asked": [...]}: what the callback received.
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, executable, cwd, prompt, decision] = process.argv.slice(2);
const entry = createRequire(join(sdkDir, "package.json")).resolve("@anthropic-ai/claude-agent-sdk");
const { query } = await import(pathToFileURL(entry).href);

const asked = [];
async function canUseTool(toolName, input, context) {
  asked.push({ toolName, input, toolUseID: context.toolUseID, suggestions: context.suggestions });
  return decision === "allow"
    ? { behavior: "allow", updatedInput: input }
    : { behavior: "deny", message: "not today" };
}

const messages = query({
  prompt,
  options: {
    pathToClaudeCodeExecutable: executable,
    cwd,
    canUseTool,
    stderr: (text) => process.stderr.write(text),
  },
});
for await (const message of messages) {
  process.stdout.write(JSON.stringify({ message }) + "\n");
}
process.stdout.write(JSON.stringify({ asked }) + "\n");
