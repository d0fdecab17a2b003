"""Agent teams (spec 6.1 [4], 12.3, 17; observed section 10): a lead, long-lived teammates, inboxes.

- :mod:`.files` — team state on disk (``config.json``, ``inboxes/<name>.json``), locked and atomic;
- :mod:`.protocol` — the message shapes (teammate-message blocks, idle / shutdown / plan JSON);
- :mod:`.roster` — the team in memory (members, colours, busy or idle);
- :mod:`.backend` — where a teammate runs (``TeammateBackend``; in process today);
- :mod:`.spawn` — a teammate's plan, made by the one child planner and builder;
- :mod:`.coordinator` — ``TeamCoordinator``: create, spawn, route, deliver, shut down;
- :mod:`.tools` — TeamCreate / TeamDelete; :mod:`.send` — SendMessage inside a team;
  :mod:`.plan_approval` — a plan-mode teammate's ExitPlanMode.
"""
