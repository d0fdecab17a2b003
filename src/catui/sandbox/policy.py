"""``BashSandbox``: how the Bash tool starts one command — inside bwrap, unsandboxed, or not at all."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from catui.paths import find_project_root
from catui.permissions.sandbox_rules import is_excluded_command
from catui.sandbox.config import SandboxSettings
from catui.sandbox.layout import Mount, SandboxLayout, build_layout, bwrap_argv, with_scratch
from catui.sandbox.layout_cache import LayoutCache, fingerprint
from catui.sandbox.nested_repos import NestedRepos
from catui.sandbox.network import ProxyRoute
from catui.sandbox.own_branch import OwnBranches
from catui.sandbox.placeholders import PlaceholderLease, lease_placeholder
from catui.sandbox.probe import Availability, probe_bwrap
from catui.sandbox.proxy import DomainProxy
from catui.sandbox.seccomp import program_fd, supported, unix_socket_filter

# What a refusal by the sandbox looks like in a command's output (EROFS, EPERM, no network).
_DENIAL_PATTERNS = re.compile(
    r"Read-only file system|Operation not permitted|Network is unreachable|Could not resolve host|"
    r"Temporary failure in name resolution|Connection refused|Name or service not known|"
    r"/tmp/\S*: No such file or directory|not in sandbox\.network\.allowedDomains|CONNECT tunnel failed|"
    r"Tunnel connection failed|403 Forbidden|returned error: 403|Can't complete SOCKS5 connection",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class LaunchPlan:
    """How to start one command: inside bwrap (``layout`` set), unsandboxed, or not at all (``refusal``).

    ``notice``: say this in the command's result (the one-time "cannot sandbox" notice). ``route``: the way to
    the allow-list proxy, when ``allowedDomains`` lists domains.
    """

    layout: SandboxLayout | None = None
    binary: str = "bwrap"
    refusal: str | None = None
    notice: str | None = None
    route: ProxyRoute | None = None
    # Held while the command runs: the placeholders of protected files that did not exist (placeholders.py),
    # and which of the layout's stray files existed before it started.
    leases: tuple[PlaceholderLease, ...] = ()
    strays_before: frozenset[Path] = frozenset()
    # The protected symbolic links and what each pointed to when the command started.
    links_before: tuple[tuple[Path, str], ...] = ()
    # The seccomp program that keeps the command from opening unix sockets (seccomp.py); None: allowed.
    seccomp: bytes | None = None

    @property
    def sandboxed(self) -> bool:
        return self.layout is not None

    @contextlib.contextmanager
    def command_line(self, command: list[str], cwd: Path) -> Iterator[tuple[list[str], tuple[int, ...]]]:
        """``command`` as it is started — under bwrap when sandboxed (behind the proxy bridge), else unchanged —
        and the file descriptors the child must inherit (``pass_fds``), open while the block runs: start the
        process inside it."""
        if self.layout is None:
            yield command, ()
            return
        real_cwd = Path(os.path.realpath(cwd))
        if self.route is not None:  # the bridge loads the filter itself, after connecting to the proxy is set up
            yield bwrap_argv(self.binary, self.layout, real_cwd, self.route.wrap(command, self.seccomp)), ()
        elif self.seccomp is None:
            yield bwrap_argv(self.binary, self.layout, real_cwd, command), ()
        else:
            with program_fd(self.seccomp) as fd:
                yield bwrap_argv(self.binary, self.layout, real_cwd, command, seccomp_fd=fd), (fd,)

    def finish(self) -> str | None:
        """After the command (and every process it started) has ended: release the placeholders, and remove
        a stray file the command created (e.g. ``.git/commondir``); a note for the result when it did."""
        for lease in self.leases:
            lease.release()
        if self.layout is None:
            return None
        restored = [note for path, target in self.links_before if (note := _restore_link(path, target))]
        removed = []
        for path in self.layout.strays:
            if path not in self.strays_before and os.path.lexists(path):
                try:
                    os.unlink(path)
                except OSError:
                    continue
                removed.append(str(path))
        notes = list(restored)
        if removed:
            notes.append(
                f"catui's sandbox removed {', '.join(removed)}, which this command created: it would make git take "
                "its configuration from elsewhere, outside the sandbox."
            )
        return " ".join(notes) or None

    def env(self) -> dict[str, str]:
        """Variables the command needs on top of the agent's: the private /tmp, the proxy's address."""
        if self.layout is None:
            return {}
        return {"TMPDIR": "/tmp", **(self.route.env() if self.route is not None else {})}


@dataclass(frozen=True)
class AgentFolders:
    """The folders of the agent a command runs for (from its ToolContext)."""

    cwd: Path
    project_root: Path
    working_directories: tuple[Path, ...]


class BashSandbox:
    """One per app, shared by every agent's Bash tool (sub-agents get the same object through ToolServices).

    ``probe`` checks bwrap (once, lazily, at the first command); ``report`` receives the one-time notice
    when bwrap cannot be used (the CLI prints it on stderr). ``proxy`` serves an ``allowedDomains`` list
    (started at the first command that needs it; default: a ``DomainProxy`` of the settings' list).
    """

    def __init__(
        self,
        settings: SandboxSettings,
        *,
        probe: Callable[[], Availability] = probe_bwrap,
        report: Callable[[str], None] | None = None,
        home: Path | None = None,
        proxy: DomainProxy | None = None,
    ) -> None:
        self.settings = settings
        if proxy is None and settings.filters_network:
            proxy = DomainProxy(settings.allowed_domains)
        self._proxy = proxy
        self._layouts = LayoutCache()
        if probe is probe_bwrap:  # never a bwrap that a sandboxed command could have planted (probe.py)
            probe = self._probe_outside_writable_folders
        self._nested = NestedRepos()
        self._own_branches = OwnBranches()
        self._probe = probe
        self._report = report or _print_stderr
        self._home = home
        self._availability: Availability | None = None
        self._announced = False

    def _probe_outside_writable_folders(self) -> Availability:
        return probe_bwrap(avoid=(find_project_root(Path.cwd()), *self.settings.allow_write))

    @property
    def availability(self) -> Availability:
        if self._availability is None:
            self._availability = self._probe()
        return self._availability

    def excludes(self, command: str) -> bool:
        """Whether ``command`` runs outside the sandbox because of ``sandbox.excludedCommands``."""
        return is_excluded_command(command, self.settings.excluded_commands)

    def layout_for(self, folders: AgentFolders, scratch: Iterable[Path] = ()) -> SandboxLayout:
        """What a command of this agent may write (the folders' part reused while they are unchanged)."""
        roots = tuple(folders.working_directories or (folders.project_root,))
        home = self._home or Path(os.environ.get("HOME") or Path.home())
        settings = self.settings
        nested = self._nested.under(roots)

        def build() -> SandboxLayout:
            return build_layout(
                writable_roots=roots,
                readable=[folders.project_root, home, folders.cwd],
                extra_writable=settings.allow_write,
                deny_write=settings.deny_write,
                share_network=settings.network_enabled,
                nested_git=nested,
                own_branches=self._own_branches,
            )

        key = (roots, folders.project_root, home, folders.cwd)
        layout = self._layouts.get(key, fingerprint(roots, settings.allow_write, settings.deny_write), build)
        return with_scratch(layout, scratch)

    def plan(self, command: str, folders: AgentFolders, scratch: Iterable[Path] = ()) -> LaunchPlan:
        """How to start ``command`` for the agent with ``folders``."""
        if self.excludes(command):
            return LaunchPlan()
        availability = self.availability
        if not availability.usable:
            notice = self._announce(availability)
            if self.settings.fail_if_unavailable:
                return LaunchPlan(
                    refusal=(
                        f"Bash is refused: the sandbox is required (sandbox.failIfUnavailable) but cannot run "
                        f"here: {availability.reason}. Ask the user to fix that, or to set "
                        "sandbox.failIfUnavailable to false to run commands unsandboxed."
                    )
                )
            return LaunchPlan(notice=notice)
        assert availability.binary is not None
        layout = self.layout_for(folders, scratch)
        route = None
        if self._proxy is not None:
            route = ProxyRoute(self._proxy.start(), self.settings.allowed_domains)
            # The socket's folder usually lives in the host's /tmp, which the private /tmp hides: mount it back
            # (and the bridge's script and interpreter, when a checkout or venv lives there too).
            extra = tuple(Mount(path, False) for path in route.mounts_needed())
            layout = dataclasses.replace(layout, mounts=(*layout.mounts, *extra))
        layout, leases = _hold_placeholders(layout)
        strays_before = frozenset(p for p in layout.strays if os.path.lexists(p))
        links_before = tuple((p, os.readlink(p)) for p in layout.links if os.path.islink(p))
        return LaunchPlan(
            layout=layout, binary=availability.binary, route=route, leases=leases, strays_before=strays_before,
            links_before=links_before,
            seccomp=self.unix_socket_filter(),
        )

    def unix_socket_filter(self) -> bytes | None:
        """The program that bars unix sockets, unless ``network.allowAllUnixSockets`` or this machine lacks one."""
        if self.settings.allow_all_unix_sockets or not supported():
            return None
        return unix_socket_filter()

    def close(self) -> None:
        """Stop the allow-list proxy, if one was started (the app calls this when it closes)."""
        if self._proxy is not None:
            self._proxy.close()

    def _announce(self, availability: Availability) -> str | None:
        """The unavailability notice, the first time only (in a result and on the report channel)."""
        if self._announced:
            return None
        self._announced = True
        what = "Bash is refused" if self.settings.fail_if_unavailable else "commands run UNSANDBOXED"
        notice = f"catui: sandbox.enabled is set but the sandbox cannot run: {availability.reason}; {what}."
        self._report(notice)
        return notice

    def denial_note(self, output: str, layout: SandboxLayout) -> str | None:
        """A note for a failed sandboxed command whose output looks like a refusal by the sandbox."""
        if not _DENIAL_PATTERNS.search(output):
            return None
        if layout.share_network:
            network = "shared with the host"
        elif self.settings.filters_network:
            network = (
                "reachable only through catui's proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set; no direct "
                "connections, no DNS) and only for hosts matching sandbox.network.allowedDomains: "
                + ", ".join(self.settings.allowed_domains)
            )
        else:
            network = "off (no connections, not even to 127.0.0.1)"
        sockets = "" if self.unix_socket_filter() is None else "; no unix socket can be opened"
        return (
            "This command ran in catui's sandbox, which may have refused it: only "
            f"{layout.describe_writable()} are writable (the host's /tmp is not visible), and the network is "
            f"{network}{sockets}. Work inside those "
            "folders; if the command really needs more, tell the user which path (sandbox.filesystem.allowWrite), "
            "host (sandbox.network.allowedDomains) or command (sandbox.excludedCommands) to allow."
        )


def _hold_placeholders(layout: SandboxLayout) -> tuple[SandboxLayout, tuple[PlaceholderLease, ...]]:
    """Create (and lease) the protected files that do not exist yet; a path that cannot be created is dropped
    (catui could not create it, so neither can the command, which runs as the same user with less rights)."""
    leases: list[PlaceholderLease] = []
    mounts: list[Mount] = []
    for mount in layout.mounts:
        if mount.placeholder:
            try:
                lease = lease_placeholder(mount.path)
            except OSError:
                if not os.path.lexists(mount.path):
                    continue
                lease = None
            if lease is not None:
                leases.append(lease)
        mounts.append(mount)
    return dataclasses.replace(layout, mounts=tuple(mounts)), tuple(leases)


def _restore_link(path: Path, target: str) -> str | None:
    """Put the protected symbolic link ``path`` → ``target`` back if a command replaced or removed it; what
    replaced it is kept beside it under another name. A note for the result, or None when it was untouched."""
    try:
        if os.path.islink(path) and os.readlink(path) == target:
            return None
        kept = None
        if os.path.lexists(path):
            kept = _free_name(path)
            os.rename(path, kept)
        os.symlink(target, path)
    except OSError as error:
        return (f"catui's sandbox could not put back the link {path} -> {target}, which this command replaced "
                f"({error.strerror}); check it before catui or git next runs here.")
    aside = f" (what replaced it is now {kept})" if kept is not None else ""
    return (f"catui's sandbox put back the link {path} -> {target}, which this command replaced{aside}: "
            "it is configuration that runs outside the sandbox.")


def _free_name(path: Path) -> Path:
    for n in range(1, 1000):
        candidate = path.with_name(f"{path.name}.replaced-in-sandbox-{n}")
        if not os.path.lexists(candidate):
            return candidate
    raise FileExistsError(path)


def _print_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
