"""OS-level sandbox for Bash commands (bubblewrap on Linux): settings, availability probe, bwrap command line.

``config`` reads the ``sandbox`` setting; ``probe`` checks once whether bwrap can create namespaces here;
``layout`` works out what a command may write for one agent; ``bwrap`` turns that into a command line;
``policy`` (``BashSandbox``) is what the Bash tool asks before it starts a command.
"""
