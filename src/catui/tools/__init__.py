"""The built-in tools (Read, Edit, Bash, Grep, WebFetch …), their base classes and context, and the
protocols through which a tool reaches what higher layers provide; nothing here imports those layers."""
