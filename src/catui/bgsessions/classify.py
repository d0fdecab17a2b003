"""What a background session's state is after a turn, and what it is called: the text side of the two side requests
Claude Code makes after each turn of a ``--bg`` session (``spec/observed-cc-now.md`` §8).

**State.** ``working`` (it will go on by itself), ``blocked`` (it waits for the user: ``needs`` says for what),
``done`` (it delivered) or ``failed`` (it gave up). :func:`preclassify` settles the plain cases from the end of the
turn's text, as Claude Code does before it asks a model: a ``result: …`` line (done, ``output.result``), a
``failed: …`` line, a ``blocked: …`` / ``needs input: …`` / ``I'm blocked: …`` line, a closing question, a named
wait on CI or a build (working), "awaiting your input", "please confirm …" (blocked), "no action needed" (done).
Text inside a code fence does not count. The rest goes to a model (:func:`classifier_request_text`), whose JSON
answer ``{state, detail, tempo, needs?, output}`` :func:`parse_classification` checks; a terminal state's tempo is
``idle``, and a ``needs`` only goes with ``blocked``.

**Name.** Until it has one, a session is called by its prompt; after its first turn a model is asked for a 2–4 word
lowercase label (:func:`namer_request_text`) given the prompt and the start of the reply, told the names other
running sessions already use; a taken label is asked again, up to :data:`NAME_ATTEMPTS` times in all, and
:func:`clean_label` drops empty and placeholder labels. A ``--name`` is never replaced.

catui's prompts are its own; the facts (states, fields, limits, the retry count) are Claude Code's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

STATES = ("working", "blocked", "done", "failed")
TERMINAL = ("done", "failed")
TEMPOS = ("active", "idle", "blocked")
DETAIL_CHARS = 800
"""Claude Code cuts a detail, a need and a result to 800 characters."""
TAIL_CHARS = 2000
"""How much of the end of the turn's text the classifier model reads."""
LABEL_CHARS = 40
NAME_ATTEMPTS = 3
PROMPT_NAME_CHARS = 80
"""A session named by its prompt shows this much of it (catui's choice; the prompt is kept whole in the entry)."""

CLASSIFIER_SYSTEM = "You report the state of a catui background session after its turn. Answer with JSON only."
NAMER_SYSTEM = "You name catui background sessions. Answer with the label only."
SIDE_REQUEST_SYSTEMS = (CLASSIFIER_SYSTEM, NAMER_SYSTEM)


@dataclass
class Classification:
    state: str
    detail: str = ""
    tempo: str = "idle"
    needs: str | None = None
    output: dict[str, str] = field(default_factory=dict)
    source: str = "model"


def cut(text: str, limit: int = DETAIL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def prompt_name(prompt: str) -> str:
    """The name of a session that has no label yet: its prompt, on one line."""
    return cut(prompt, PROMPT_NAME_CHARS) or "session"


def in_code_fence(text: str, position: int) -> bool:
    """Whether ``position`` lies inside a ``` or ~~~ fence opened before it."""
    return len(re.findall(r"^\s{0,3}(?:```|~~~)", text[:position], flags=re.MULTILINE)) % 2 == 1


_MARKERS = (
    ("failed", re.compile(r"(?:^|\n)\s*failed\s*[:—–-]\s*(.{3,200}?)\s*(?=\n|$)", re.IGNORECASE)),
    ("blocked", re.compile(r"(?:^|\n)\s*needs input\s*[:—–-]\s*(.{3,200}?)\s*(?=\n|$)", re.IGNORECASE)),
    ("blocked", re.compile(r"(?:^|\n)\s*blocked\s*[:—–-]\s*(.{3,200}?)\s*(?=\n|$)", re.IGNORECASE)),
    ("blocked", re.compile(r"\bI'?m blocked\s*[:—–-]\s*(.{3,200}?)\s*(?=\n|$)", re.IGNORECASE)),
)
_RESULT = re.compile(r"(?:^|\n)\s*result:\s*(.+?)\s*(?=\n|$)", re.IGNORECASE)
_NEXT = re.compile(r"(?:^|\n)\s*next:\s*\S", re.IGNORECASE)
_NOTHING_NEEDED = re.compile(r"\b(?:no response requested|no(?: user)? action (?:needed|required)|nothing "
                             r"(?:needed|required) from you)\b", re.IGNORECASE)
_EXTERNAL_WAIT = re.compile(r"\b(?:waiting (?:for|on)|pending)\s+(?:the\s+)?(?:CI|build|tests?|reviewer|"
                            r"deploy(?:ment)?|workflow|checks?|rollout|merge queue)\b", re.IGNORECASE)
_AWAITING_USER = re.compile(r"\b(?:awaiting|waiting (?:for|on)|pending)\s+(?:your\s+(?:feedback|input|decision|"
                            r"response|approval|direction|guidance|go-ahead)|you\b|the user\b)", re.IGNORECASE)
_ASKS = re.compile(r"\b(?:please (?:run|provide|confirm|clarify|choose|let me know)|let me know (?:which|what|how|"
                   r"when)|which (?:option|approach|one)|should I (?:proceed|continue|use))\b", re.IGNORECASE)


def preclassify(text: str) -> Classification | None:
    """The state the end of the turn's text states plainly, or None when a model has to judge it."""
    text = text.strip()
    if not text:
        return None
    tail_start = max(0, len(text) - DETAIL_CHARS)
    tail = text[tail_start:]
    result = None
    for match in _RESULT.finditer(tail):
        if not in_code_fence(text, tail_start + match.start()):
            result = match
    after = tail[result.end():] if result else tail
    after_start = tail_start + (result.end() if result else 0)
    marker = None
    for state, pattern in _MARKERS:
        for match in pattern.finditer(after):
            if not in_code_fence(text, after_start + match.start()) and (marker is None or
                                                                          match.start() > marker[1].start()):
                marker = (state, match)
    if result and marker is None:
        value = cut(result.group(1))
        if _NEXT.search(after):
            return Classification("working", value, "idle", output={"result": value}, source="result-then-next")
        return Classification("done", value, "idle", output={"result": value}, source="result-marker")
    if marker is not None:
        state, match = marker
        value = cut(match.group(1))
        if state == "failed":
            return Classification("failed", value, "idle", source="failed-marker")
        if _NOTHING_NEEDED.search(after):
            return Classification("done", cut(result.group(1)), "idle", output={"result": cut(result.group(1))},
                                  source="blocked-disclaimed") if result else None
        return Classification("blocked", value, "blocked", needs=value, source="blocked-marker")
    # the last sentence decides the rest
    cut_at = max(tail.rfind(". "), tail.rfind("! "), tail.rfind("? ", 0, len(tail) - 2), tail.rfind("\n"))
    last = tail[cut_at + 1:].strip().lstrip(".!? ") if cut_at >= 0 else tail
    if in_code_fence(text, tail_start + max(cut_at, 0) + 1):
        return None
    if re.search(r"[?？]\s*$", tail) and len(last.rstrip("?？ ")) >= 4:
        return Classification("blocked", cut(last), "blocked", needs=cut(last), source="trailing-question")
    if _NOTHING_NEEDED.search(last):
        return Classification("done", cut(last), "idle", source="nothing-needed")
    if waiting := _EXTERNAL_WAIT.search(last):
        return Classification("working", cut(waiting.group(0)), "idle", source="wait-external")
    for pattern, source in ((_AWAITING_USER, "awaiting-user"), (_ASKS, "ask-verb")):
        if asked := pattern.search(last):
            need = cut(last[asked.start():])
            return Classification("blocked", need, "blocked", needs=need, source=source)
    return None


def classifier_request_text(tail: str, previous: str, minutes: int, tools: str, latest_ask: str) -> str:
    """The classifier's question: the session's context, the four states, and the JSON to answer with."""
    ask = f'\nThe user\'s latest request: "{cut(latest_ask, 300)}"' if latest_ask else ""
    return (
        f"State so far: {previous} (for {minutes}m)\nTools used this turn: {tools or 'none'}{ask}\n"
        f"End of what the session wrote (last {len(tail)} characters):\n{tail}\n\n"
        "A person started this session and left. Which state is it in now?\n"
        "- working: it said it will continue on its own (next steps, or a wait on something it started)\n"
        "- blocked: it cannot go on until the person answers, decides, provides or does something\n"
        "- done: it delivered what was asked (an answer, a change, a finding); an optional offer to do more is "
        "still done\n"
        "- failed: it gave up and nothing the person could provide would help\n"
        'Answer with one JSON object: {"state": "working|blocked|done|failed", "detail": "<one line on where it '
        'stands>", "tempo": "active|idle|blocked", "needs": "<what the person must do, only when blocked>", '
        '"output": {"result": "<the deliverable in one short sentence, only when done>"}}')


def parse_classification(reply: str, previous: str) -> Classification | None:
    """The classifier model's answer, checked; None when it is not the JSON asked for."""
    body = re.sub(r"^```(?:json)?\s*|\s*```\s*$", "", reply.strip(), flags=re.IGNORECASE)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        raw = json.loads(body[start: end + 1])
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None

    def text(key: str) -> str | None:
        value = raw.get(key)
        return value if isinstance(value, str) and value else None

    state = text("state")
    state = state if state in STATES else (previous if previous in STATES else "working")
    tempo = text("tempo")
    tempo = "idle" if state in TERMINAL else tempo if tempo in TEMPOS else "active"
    if state == "blocked":
        tempo = "blocked"
    needs = text("needs") if state == "blocked" else None
    output: dict[str, str] = {}
    if isinstance(raw.get("output"), dict) and isinstance(raw["output"].get("result"), str) and raw["output"]["result"]:
        output["result"] = cut(raw["output"]["result"])
    return Classification(state, cut(text("detail") or ""), tempo, cut(needs) if needs else None, output)


def fallback(text: str) -> Classification:
    """When no model answers: catui knows the turn has ended, so ``done``, with the last line as the detail.
    (Claude Code's own fallback says ``working``; its turn-end signal comes from elsewhere.)"""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return Classification("done", cut(lines[-1]) if lines else "—", "idle", source="fallback")


def namer_request_text(prompt: str, reply: str, taken: list[str]) -> str:
    """The namer's question: a 2–4 word lowercase label for the job, avoiding the names already taken."""
    agent = f'\nSession: "{cut(reply, 300)}"' if reply else ""
    avoid = f"\nAlready taken (pick another): {', '.join(taken)}" if taken else ""
    return (f'Give this job a label of 2-4 lowercase words.\nUser: "{cut(prompt, 300)}"{agent}\n'
            "Name the most specific thing it works on (a component, file or feature) rather than a verb such as "
            f"fix, add or update. Reply with the label alone.{avoid}")


_DEGENERATE = re.compile(r"^(unspecified|untitled|unnamed)\b|^(unknown|no) (request|task|job|input)\b")


def clean_label(reply: str) -> str | None:
    """The label in the namer's reply, or None when it gave none worth using."""
    label = reply.strip().strip("\"'`").strip().lower()
    label = label[:LABEL_CHARS].strip()
    if not label or _DEGENERATE.search(label):
        return None
    return label


def tool_summary(names: list[str]) -> str:
    """``Bash×3, Read`` — the tools of the turn, most used first, five at most."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])[:5]
    return ", ".join(f"{name}×{count}" if count > 1 else name for name, count in ranked)


def as_fields(result: Classification) -> dict[str, Any]:
    """The registry fields a classification sets."""
    return {"state": result.state, "detail": result.detail, "tempo": result.tempo,
            "needs": result.needs if result.state == "blocked" else None}
