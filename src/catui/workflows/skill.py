"""The built-in ``workflow-authoring`` skill: how to write a script for the Workflow tool (catui's words)."""

from __future__ import annotations

from catui.skills.model import SkillDefinition

WORKFLOW_AUTHORING = """# Writing a workflow

A workflow is a small JavaScript program that runs many agents and returns one value. Pass it to the
Workflow tool as `script` (or save it under `.claude/workflows/<name>.js` and pass `name`). It runs in the
background; you get a notification with its return value as JSON.

## Shape

```js
export const meta = {
  name: "api-audit",
  description: "Audit every public endpoint",          // shown in the launch text and the notification
  phases: [{title: "Find", detail: "list endpoints"}, {title: "Audit", detail: "one agent each"}],
}
phase("Find")
const found = await agent("List the public HTTP endpoints of this repository.", {
  label: "list endpoints",
  schema: {type: "object", properties: {endpoints: {type: "array", items: {type: "string"}}}, required: ["endpoints"]},
})
phase("Audit")
const reports = await parallel(found.endpoints.map(e => () => agent("Audit " + e + " for missing auth checks.", {label: e})))
return {endpoints: found.endpoints, reports}
```

The body after `meta` runs as an async function: use `await` at the top level and `return` the result
(anything JSON can hold). Plain JavaScript only: no `import`, no TypeScript, no files, network or timers;
agents do the work.

## Functions

- `agent(prompt, options)` → the agent's final text, or with `schema` the object it handed back (the agent
  gets a StructuredOutput tool whose input schema is yours). Options: `label` (shown in progress; default
  the prompt), `phase`, `schema`, `model`, `effort`, `isolation` ("worktree"), `agentType`. A failed agent
  rejects: wrap it in try/catch to go on. A `schema` must be a valid JSON Schema whose root is
  `{type: "object", properties: {...}}`; any other is refused at once, before an agent starts.
- `parallel([() => agent(...), ...])` → all results in order; takes functions, not promises. A failed entry
  is `null`. At most CLAUDE_CODE_WORKFLOW_MAX_CONCURRENT_AGENTS agents run at once (default min(16, CPUs−2)).
- `pipeline(items, stage1, stage2, ...)` → each item goes through the stages in turn (`stage(value, item,
  index)`), items side by side.
- `phase(title)` starts a phase; `log(text)` adds a line to the run's log.
- `workflow(name, args)` or `workflow({scriptPath}, args)` runs another workflow (a saved one by name, or a
  script file) as one step and gives its return value; the child sees `args`. It shares this run's agent
  cap, budget and journal, and its agents are grouped under `▸ name`. Only one level: a child cannot call
  `workflow()`. An unknown name, an unreadable file, a syntax error or a child that throws rejects the call.
- `args` is the tool call's `args`; `budget.total`, `budget.spent()`, `budget.remaining()` are dollars
  (total is null without a budget; the user sets it). Once it is spent, further agent() calls reject.

## Good practice

- Give each agent one self-contained task: it sees only its prompt, not this conversation.
- Use `schema` whenever the script reads fields of an answer.
- Every agent() call is journaled. After editing a script, resume with
  `Workflow({scriptPath, resumeFromRunId})`: calls whose prompt and options did not change reuse their
  results; the rest run.
"""

WORKFLOW_AUTHORING_SKILL = SkillDefinition(
    name="workflow-authoring",
    description="How to write a workflow script for the Workflow tool (agent, parallel, pipeline, phase, schema, resume).",
    body=WORKFLOW_AUTHORING,
    base_dir="",
    path="(built in)",
    source="built-in",
)
