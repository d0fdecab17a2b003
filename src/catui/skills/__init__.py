"""Skills: ``SKILL.md`` instructions the model can load on demand (observed section 13).

``model`` holds the definition, ``discovery`` finds and parses skill folders,
``registry`` merges the sources and writes what the model is told, ``tool`` is
the Skill tool, ``preload`` puts an agent definition's ``skills:`` into a
child's first message.
"""
