"""``/output-style [NAME]``: list the output styles, or switch to one (catui.styles)."""

from __future__ import annotations

from catui.cli.tui.slash_commands import CommandHost, SlashCommand


async def output_style(host: CommandHost, argument: str) -> None:
    styles = host.app.services.output_style
    if styles is None:
        host.say("Output styles are not available in this session.", "dim")
        return
    if argument:
        saved = host.app.set_output_style(argument)
        where = f" (saved in {saved})" if saved is not None else ""
        host.say(f"Output style set to {argument}{where}.")
        return
    for name in styles.catalog.names():
        style = styles.catalog.get(name)
        marker = "❯" if name == styles.name else " "
        about = style.description if style is not None else "catui's own way of answering"
        origin = f" [{style.source}]" if style is not None else ""
        host.say(f"{marker} {name} · {about}{origin}")
    host.say("/output-style NAME switches (remembered for this project).", "dim")


STYLE_COMMANDS = (SlashCommand("output-style", "list the output styles or switch to one", output_style, "[name]"),)
