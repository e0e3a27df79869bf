"""Choosing and building the provider the settings ask for."""

from __future__ import annotations

from pheron_tui.config import Settings
from pheron_tui.providers.base import Provider, ProviderError


def create_provider(settings: Settings) -> Provider:
    """Build (not load) the provider; raise ProviderError with a clear message."""
    if settings.provider == "scripted":
        from pheron_tui.providers.scripted import ScriptedProvider, load_script

        if settings.script is None:
            raise ProviderError("the scripted provider needs --script FILE")
        return ScriptedProvider(load_script(settings.script), model=settings.script.name)
    if settings.provider == "mlx":
        from pheron_tui.providers.mlx import MLXProvider

        return MLXProvider(settings.model)
    raise ProviderError(
        f"the {settings.provider!r} provider is not available in this version; "
        "use --provider mlx or --provider scripted"
    )
