"""Rendering a model's own Jinja chat template, the way Hugging Face tokenizers do.

For engines that hand us the template as text (a GGUF's ``tokenizer.chat_template``) rather
than a tokenizer object that renders it: same variables (``messages``, ``tools``,
``add_generation_prompt``, ``enable_thinking``, ``bos_token``, ``eos_token``), same helpers
(``raise_exception``, ``strftime_now``, ``tojson`` that keeps non-ASCII), in a sandbox so a
template can never reach Python.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pheron_tui.providers.base import ProviderError


class ChatTemplate:
    def __init__(self, source: str, bos_token: str = "", eos_token: str = "") -> None:
        from jinja2.exceptions import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        def raise_exception(message: str) -> None:
            raise TemplateError(message)

        def tojson(value: Any, indent: int | None = None, **_: Any) -> str:
            return json.dumps(value, ensure_ascii=False, indent=indent)

        environment = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
        )
        environment.filters["tojson"] = tojson
        environment.globals["raise_exception"] = raise_exception
        environment.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        self.source = source
        self.bos_token = bos_token
        self.eos_token = eos_token
        try:
            self._template = environment.from_string(source)
        except TemplateError as exc:
            raise ProviderError(f"the model's chat template does not compile: {exc}") from None

    @property
    def takes_tools(self) -> bool:
        """Whether the template renders a ``tools`` list (then calls go the native way)."""
        return "tools" in self.source

    def render(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
        enable_thinking: bool = False,
    ) -> str:
        try:
            return self._template.render(
                messages=messages,
                tools=tools,
                add_generation_prompt=add_generation_prompt,
                enable_thinking=enable_thinking,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except Exception as exc:  # a template's own rules (raise_exception) or its bugs
            raise ProviderError(
                f"the model's chat template rejected the conversation: {exc}"
            ) from None
