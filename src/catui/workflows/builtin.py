"""catui's built-in workflows (the Workflow tool's ``name``), written for catui."""

from __future__ import annotations

DEEP_RESEARCH = """export const meta = {
  name: "deep-research",
  description: "Research a question from several angles and merge the findings",
  phases: [{title: "Plan", detail: "split the question"}, {title: "Investigate", detail: "one agent per angle"},
           {title: "Merge", detail: "one answer with sources"}],
}
const question = typeof args === "string" ? args : (args && args.question) || "the user's question"
phase("Plan")
const plan = await agent(
  "Split this question into 3 to 5 independent angles worth investigating separately: " + question,
  {label: "plan angles", schema: {type: "object", properties: {angles: {type: "array", items: {type: "string"}}},
                                  required: ["angles"]}})
phase("Investigate")
const findings = await parallel(plan.angles.map(angle => () => agent(
  "Investigate this angle of the question \\"" + question + "\\": " + angle +
  ". Report what you found, with the files, commands or pages it rests on.", {label: angle})))
phase("Merge")
return await agent("Merge these findings into one answer to \\"" + question + "\\". Note disagreements.\\n\\n" +
  findings.map((f, i) => "## " + plan.angles[i] + "\\n" + (f === null ? "(this angle failed)" : f)).join("\\n\\n"),
  {label: "merge"})
"""

BUILTIN_WORKFLOWS: dict[str, str] = {"deep-research": DEEP_RESEARCH}
