"""The session's output styles and the one the ``outputStyle`` setting picks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catui.styles.builtin import BUILTIN_STYLES
from catui.styles.discovery import load_styles, style_folders
from catui.styles.model import DEFAULT_STYLE, OutputStyle

SETTING = "outputStyle"


@dataclass
class StyleCatalog:
    """Every style a session can use, by name (``default`` is none), and the files that failed."""

    styles: dict[str, OutputStyle] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)

    def names(self) -> list[str]:
        """``default``, the built-in styles, then the others in the order they were found (Claude Code's order)."""
        return [DEFAULT_STYLE, *self.styles]

    def get(self, name: str | None) -> OutputStyle | None:
        """The style called ``name``; None for ``default``, for no name, and for a name no source defines."""
        if not name or name == DEFAULT_STYLE:
            return None
        return self.styles.get(name)


def style_catalog(cwd: Path, *, home: Path | None = None, plugin_dirs: Iterable[str] = (),
                  include_user: bool = True, include_project: bool = True) -> StyleCatalog:
    """The built-in styles, then the Markdown ones (a later one of the same name wins)."""
    catalog = StyleCatalog(styles={s.name: s for s in BUILTIN_STYLES})
    folders = style_folders(cwd, home=home, plugin_dirs=plugin_dirs, include_user=include_user,
                            include_project=include_project)
    if any(folder.is_dir() for folder, _source in folders):
        load = load_styles(folders)
        catalog.styles.update((s.name, s) for s in load.styles)
        catalog.problems = load.problems
    return catalog


def configured_style_name(settings: Mapping[str, Any]) -> str:
    """The ``outputStyle`` setting as written (``default`` when unset), as the init message reports it."""
    value = settings.get(SETTING)
    return value.strip() if isinstance(value, str) and value.strip() else DEFAULT_STYLE


@dataclass
class SessionStyle:
    """What a session knows about styles: the catalog, the configured name and the style it resolves to."""

    catalog: StyleCatalog
    name: str = DEFAULT_STYLE
    style: OutputStyle | None = None
    warning: str | None = None
    """Set when the configured name matches no style (the session then uses none)."""
    loader: Callable[[], StyleCatalog] | None = None
    """Reads the catalog again from the same folders (:meth:`reload`); None: it is fixed."""

    def reload(self) -> list[str]:
        """Read the style files again (the SDKs' ``reloadOutputStyles``); the names now available. The style in
        use stays as it was: a switch (``/output-style``) picks a reloaded one."""
        if self.loader is not None:
            self.catalog = self.loader()
        return self.catalog.names()


def session_style(cwd: Path, settings: Mapping[str, Any], *, plugin_dirs: Iterable[str] = (),
                  include_user: bool = True, include_project: bool = True) -> SessionStyle:
    """The catalog for ``cwd`` and the style the settings choose; an unknown name is a warning, not an error."""
    plugin_dirs = list(plugin_dirs)

    def load() -> StyleCatalog:
        return style_catalog(cwd, plugin_dirs=plugin_dirs, include_user=include_user, include_project=include_project)

    catalog = load()
    name = configured_style_name(settings)
    style = catalog.get(name)
    warning = None
    if style is None and name != DEFAULT_STYLE:
        warning = (f"outputStyle {name!r} matches no output style (known: {', '.join(catalog.names())}); "
                   "using the default. Add .claude/output-styles/<name>.md or fix the setting")
    return SessionStyle(catalog=catalog, name=name, style=style, warning=warning, loader=load)


def reported_style(styles: SessionStyle | None) -> tuple[str, list[str]]:
    """(the ``output_style`` an init message and server info report, the ``available_output_styles``) of a
    session's styles (``AppServices.output_style``)."""
    if styles is None:
        return DEFAULT_STYLE, [DEFAULT_STYLE]
    return styles.name, styles.catalog.names()
