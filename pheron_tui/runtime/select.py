"""Choosing and building the provider the settings ask for."""

from __future__ import annotations

import importlib.util
import platform

from pheron_tui.config import Settings
from pheron_tui.core.provider import Provider, ProviderError


def choose_engine() -> tuple[str, str]:
    """The in-process engine for ``--provider auto``, and why, in a few words."""
    if platform.system() == "Darwin" and platform.machine() == "arm64":
        return "mlx", "Apple Silicon"
    if importlib.util.find_spec("xllamacpp") is not None:
        return "llamacpp", "fastest here"
    return "mlx", "llama.cpp not installed"


def create_provider(settings: Settings) -> Provider:
    """Build (not load) the provider; raise ProviderError with a clear message."""
    if settings.provider == "auto":
        engine, why = choose_engine()
        provider = create_provider(settings.model_copy(update={"provider": engine}))
        provider.engine_reason = f"auto: {why}"
        return provider
    if settings.provider == "scripted":
        from pheron_tui.providers.scripted import ScriptedProvider, load_script

        if settings.script is None:
            raise ProviderError("the scripted provider needs --script FILE")
        return ScriptedProvider(load_script(settings.script), model=settings.script.name)
    if settings.provider == "mlx":
        from pheron_tui.providers.mlx import MLXProvider

        return MLXProvider(settings.model, constrained=settings.constrained)
    if settings.provider == "llamacpp":
        if importlib.util.find_spec("xllamacpp") is None:
            raise ProviderError(
                "--provider llamacpp needs xllamacpp (pip install xllamacpp); on Apple Silicon "
                "use --provider mlx"
            )
        from pheron_tui.providers.llamacpp import LlamaCppProvider

        return LlamaCppProvider(settings.model, constrained=settings.constrained)
    if settings.provider == "openai":
        import os

        from pheron_tui.providers.openai_compat import OpenAIProvider, default_key_env

        if settings.model in ("default", "bundled"):
            raise ProviderError(
                "--provider openai needs --model NAME: the model id the server serves "
                "(for OpenRouter, e.g. qwen/qwen3-8b)"
            )
        key_env = settings.api_key_env or default_key_env(settings.base_url)
        return OpenAIProvider(
            base_url=settings.base_url,
            model=settings.model,
            api_key=os.environ.get(key_env),
            key_env=key_env,
            tool_mode=settings.tool_mode,
            max_retries=settings.max_retries,
            connect_timeout_s=settings.connect_timeout_s,
            read_timeout_s=settings.read_timeout_s,
            context_window=settings.context_window,
        )
    raise ProviderError(f"unknown provider {settings.provider!r}")
