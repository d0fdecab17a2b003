"""The ``sandbox`` setting, in Claude Code's shape.

```json
"sandbox": {
  "enabled": true,
  "autoAllowBashIfSandboxed": true,
  "excludedCommands": ["docker"],
  "failIfUnavailable": false,
  "filesystem": {"allowWrite": ["~/.cache/pip"], "denyWrite": ["src/secrets"]},
  "network": {"allowedDomains": []}
}
```

Fields catui does not act on (``allowUnixSockets``: a list of socket paths, which a seccomp filter cannot
tell apart — only ``allowAllUnixSockets`` opens them; proxy ports, ``allowLocalBinding``, ...) are accepted and
ignored, so one settings file serves both programs. A bad pattern in ``allowedDomains`` (a URL, a path, a
port, a ``*`` inside a name) is an error naming it.
"""

from __future__ import annotations

import errno
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catui.errors import ConfigurationError

ALL_DOMAINS = "*"


@dataclass(frozen=True)
class SandboxSettings:
    """What the ``sandbox`` setting asks for.

    ``fail_if_unavailable``: when bwrap is missing or cannot create namespaces, refuse Bash (True) or run
    commands unsandboxed after saying so (False, Claude Code's default). ``allowed_domains`` empty means no
    network; ``["*"]`` means the host's network; any other list is a domain allow-list, enforced by a proxy
    outside the sandbox (``proxy.py``), the command's only way out (see docs/sandbox.md).
    """

    enabled: bool = False
    auto_allow_bash_if_sandboxed: bool = True
    excluded_commands: tuple[str, ...] = ()
    fail_if_unavailable: bool = False
    allow_write: tuple[Path, ...] = ()
    deny_write: tuple[Path, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    # Claude Code's network.allowAllUnixSockets: let commands open unix sockets (seccomp.py says why not).
    allow_all_unix_sockets: bool = False

    @property
    def network_enabled(self) -> bool:
        """Whether commands share the host's network (only for ``allowedDomains: ["*"]``)."""
        return ALL_DOMAINS in self.allowed_domains

    @property
    def filters_network(self) -> bool:
        """A per-domain allow-list: commands reach the listed hosts through catui's proxy, nothing else."""
        return bool(self.allowed_domains) and not self.network_enabled


# How much of a bad value an error quotes: the line must stay one readable line whatever the value's size.
_QUOTE_CHARS = 60


def _quote(value: Any) -> str:
    """``repr`` of ``value`` cut to one short line (a huge or deeply nested value is not printed whole)."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"<a {type(value).__name__} nested too deeply>"
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1] + "…"


def _bool(value: Any, where: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigurationError(f"{where} must be true or false, not {_quote(value)}; fix it in your settings")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigurationError(f"{where} must be a list of strings, not {_quote(value)}; fix it in your settings")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ConfigurationError(
                f"{where}[{index}] must be a string, not {_quote(item)}; fix it in your settings"
            )
        if "\x00" in item:
            # A NUL cannot be in a path, a command or a host name: the entry would silently protect, exclude or
            # allow nothing (or stop the run with a traceback where the OS refuses it).
            raise ConfigurationError(
                f"{where}[{index}] contains a NUL character ({_quote(item)}); remove it in your settings"
            )
    return tuple(value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{where} must be an object, not {_quote(value)}; fix it in your settings")
    return value


def _domains(values: tuple[str, ...]) -> tuple[str, ...]:
    """Check allowedDomains patterns: ``*``, a host name or address, or ``*.`` and a host name."""
    for value in values:
        name = value[2:] if value.startswith("*.") else value
        if value == ALL_DOMAINS:
            continue
        if not name or "*" in name or (any(c in name for c in "/:@ ") and not _is_ipv6(name)):
            raise ConfigurationError(
                f"sandbox.network.allowedDomains: {_quote(value)} is not a host name pattern; write a bare host "
                "(example.com), a subdomain wildcard (*.example.com) or \"*\", without scheme, path or port"
            )
    return values


def _is_ipv6(name: str) -> bool:
    try:
        ipaddress.IPv6Address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _reason(error: Exception) -> str:
    """The short cause of ``error`` (an OSError's message without the path it repeats)."""
    text = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1] + "…"


def _check_length(path: Path) -> None:
    """Raise if the system refuses ``path`` by its length alone (later checks would fail with a traceback)."""
    try:
        os.lstat(path)
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            raise
    except ValueError:
        raise


def _paths(values: tuple[str, ...], base: Path, where: str) -> tuple[Path, ...]:
    """``~`` expands to the home folder; relative paths are read from ``base`` (the working directory)."""
    paths = []
    for index, value in enumerate(values):
        try:
            expanded = Path(value).expanduser()
        except RuntimeError:  # ~name of a user this system does not know
            raise ConfigurationError(
                f"{where}[{index}]: {_quote(value)} names the home folder of an unknown user; write the path "
                "out, or ~/… for your own"
            ) from None
        try:
            path = (base / expanded).resolve()
            _check_length(path)
            paths.append(path)
        except (OSError, ValueError, RuntimeError) as error:  # a symbolic-link loop, a name too long for the system
            raise ConfigurationError(
                f"{where}[{index}]: {_quote(value)} is not a usable path ({_reason(error)}); fix it in your settings"
            ) from None
    return tuple(paths)


def sandbox_settings_from(value: Any, base: Path) -> SandboxSettings:
    """Read a ``sandbox`` settings value (``None`` when absent). Raises ConfigurationError naming the bad field."""
    raw = _mapping(value, "sandbox")
    filesystem = _mapping(raw.get("filesystem"), "sandbox.filesystem")
    network = _mapping(raw.get("network"), "sandbox.network")
    return SandboxSettings(
        enabled=_bool(raw.get("enabled"), "sandbox.enabled", False),
        auto_allow_bash_if_sandboxed=_bool(
            raw.get("autoAllowBashIfSandboxed"), "sandbox.autoAllowBashIfSandboxed", True
        ),
        excluded_commands=_strings(raw.get("excludedCommands"), "sandbox.excludedCommands"),
        fail_if_unavailable=_bool(raw.get("failIfUnavailable"), "sandbox.failIfUnavailable", False),
        allow_write=_paths(_strings(filesystem.get("allowWrite"), "sandbox.filesystem.allowWrite"), base,
                           "sandbox.filesystem.allowWrite"),
        deny_write=_paths(_strings(filesystem.get("denyWrite"), "sandbox.filesystem.denyWrite"), base,
                          "sandbox.filesystem.denyWrite"),
        allowed_domains=_domains(_strings(network.get("allowedDomains"), "sandbox.network.allowedDomains")),
        allow_all_unix_sockets=_bool(
            network.get("allowAllUnixSockets"), "sandbox.network.allowAllUnixSockets", False
        ),
    )


def merge_sandbox_values(from_settings: Any, from_sdk: Mapping[str, Any] | None) -> Any:
    """The SDK's ``sandbox`` option over the settings' one, key by key (nested objects merged one level)."""
    if not from_sdk:
        return from_settings
    if not isinstance(from_sdk, Mapping):
        raise ConfigurationError(f"the sandbox option must be a dict, not {_quote(from_sdk)}")
    merged: dict[str, Any] = dict(from_settings) if isinstance(from_settings, Mapping) else {}
    for key, value in from_sdk.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged
