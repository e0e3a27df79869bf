"""Tiny Qwen-style models built by the tests: random weights, a byte-level BPE trained offline,
and compact chat templates written here in the shape of Qwen3 (JSON calls in <tool_call>) and
Qwen3.5 (XML <function=…> calls; the prompt opens <think>). Results go back as
<tool_response>; reasoning is kept after the last user message.
Replies are forced token by token, so every real piece (template, markers, parser, guard,
dispatch, prompt cache) runs while the text is known in advance."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

QWEN3_STYLE_TEMPLATE = r"""
{%- set ns = namespace(last_query=0) -%}
{%- for m in messages -%}{%- if m.role == 'user' -%}{%- set ns.last_query = loop.index0 -%}{%- endif -%}{%- endfor -%}
{%- if tools -%}
<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools

You may call one or more functions to assist with the user query.

<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0].role == 'system' -%}
<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif -%}
{%- for m in messages -%}
{%- if m.role == 'user' -%}
<|im_start|>user
{{ m.content }}<|im_end|>
{% elif m.role == 'assistant' -%}
<|im_start|>assistant
{% if loop.index0 > ns.last_query and m.reasoning_content %}<think>
{{ m.reasoning_content }}
</think>

{% endif %}{{ m.content }}
{%- for tool_call in m.tool_calls or [] -%}
{%- if tool_call.function %}{% set tool_call = tool_call.function %}{% endif -%}
{%- if loop.first and m.content %}{{ '\n' }}{% endif %}
{%- if not loop.first %}{{ '\n' }}{% endif %}<tool_call>
{"name": "{{ tool_call.name }}", "arguments": {{ tool_call.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% elif m.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}
<tool_response>
{{ m.content }}
</tool_response>
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>
{% endif -%}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% if enable_thinking is defined and enable_thinking is false %}<think>

</think>

{% endif -%}
{%- endif -%}
"""


QWEN35_STYLE_TEMPLATE = r"""
{%- set ns = namespace(last_query=0) -%}
{%- for m in messages -%}{%- if m.role == 'user' -%}{%- set ns.last_query = loop.index0 -%}{%- endif -%}{%- endfor -%}
<|im_start|>system
{% if tools -%}
# Tools

You have access to the following functions:

<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

If you choose to call a function ONLY reply in the following format with NO suffix:

<tool_call>
<function=example_function_name>
<parameter=example_parameter_1>
value_1
</parameter>
</function>
</tool_call>
{% endif -%}
{% if messages[0].role == 'system' %}
{{ messages[0].content }}{% endif %}<|im_end|>
{% for m in messages -%}
{%- if m.role == 'user' -%}
<|im_start|>user
{{ m.content }}<|im_end|>
{% elif m.role == 'assistant' -%}
<|im_start|>assistant
{% if loop.index0 > ns.last_query %}<think>
{{ m.reasoning_content or '' }}
</think>

{% endif %}{{ m.content }}
{%- for tool_call in m.tool_calls or [] -%}
{%- if tool_call.function %}{% set tool_call = tool_call.function %}{% endif -%}
{%- if loop.first and m.content %}{{ '\n\n' }}{% endif -%}
{%- if not loop.first %}{{ '\n' }}{% endif -%}
<tool_call>
<function={{ tool_call.name }}>
{% for key, value in tool_call.arguments.items() -%}
<parameter={{ key }}>
{{ value | tojson if value is mapping or (value is iterable and value is not string) else value | string }}
</parameter>
{% endfor -%}
</function>
</tool_call>
{%- endfor %}<|im_end|>
{% elif m.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}
<tool_response>
{{ m.content }}
</tool_response>
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>
{% endif -%}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
<think>
{% if enable_thinking is defined and enable_thinking is false %}
</think>

{% endif -%}
{%- endif -%}
"""


def _tokenizer(template: str):
    import mlx_lm
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = sorted(glob.glob(os.path.join(os.path.dirname(mlx_lm.__file__), "*.py")))[:12]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=3000,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        show_progress=False,
    )
    tokenizer.train(corpus, trainer)
    # As in Qwen: added but not special, so they decode as their literal text.
    tokenizer.add_tokens(
        [
            AddedToken(t, special=False, normalized=False)
            for t in [
                "<tool_call>",
                "</tool_call>",
                "<think>",
                "</think>",
                "<tool_response>",
                "</tool_response>",
            ]
        ]
    )
    hf = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    hf.chat_template = template
    return hf


def _save(folder: Path, hf, config: dict, model) -> Path:
    import mlx.core as mx
    from mlx.utils import tree_flatten

    folder.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(str(folder))
    (folder / "config.json").write_text(json.dumps(config))
    mx.save_safetensors(str(folder / "model.safetensors"), dict(tree_flatten(model.parameters())))
    return folder


def build_qwen35_style(folder: Path) -> Path:
    """Hybrid Gated-DeltaNet + attention: its cache is not trimmable."""
    import mlx.core as mx
    from mlx_lm.models import qwen3_5

    mx.random.seed(0)
    hf = _tokenizer(QWEN35_STYLE_TEMPLATE)
    text = {
        "model_type": "qwen3_5_text",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "vocab_size": len(hf),
        "linear_num_value_heads": 4,
        "linear_num_key_heads": 2,
        "linear_key_head_dim": 16,
        "linear_value_head_dim": 16,
        "full_attention_interval": 4,
        "tie_word_embeddings": True,
        "rope_parameters": {
            "type": "default",
            "mrope_section": [11, 11, 10],
            "rope_theta": 1e7,
            "partial_rotary_factor": 0.25,
        },
    }
    config = {
        "model_type": "qwen3_5",
        "text_config": text,
        "tie_word_embeddings": True,
        "eos_token_id": hf.convert_tokens_to_ids("<|im_end|>"),
    }
    model = qwen3_5.Model(qwen3_5.ModelArgs.from_dict(config))
    mx.eval(model.parameters())
    return _save(folder, hf, config, model)


def build_qwen3_style(folder: Path) -> Path:
    """Dense attention: its cache is trimmable."""
    import mlx.core as mx
    from mlx_lm.models import qwen3

    mx.random.seed(0)
    hf = _tokenizer(QWEN3_STYLE_TEMPLATE)
    config = {
        "model_type": "qwen3",
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "rms_norm_eps": 1e-6,
        "vocab_size": len(hf),
        "max_position_embeddings": 32768,
        "rope_theta": 1e6,
        "tie_word_embeddings": True,
        "eos_token_id": hf.convert_tokens_to_ids("<|im_end|>"),
    }
    model = qwen3.Model(qwen3.ModelArgs.from_dict(config))
    mx.eval(model.parameters())
    return _save(folder, hf, config, model)


class ForcedReplies:
    """A logits-processor factory that makes the model say scripted text, per purpose."""

    def __init__(self, tokenizer, **replies: list[str]) -> None:
        self.tokenizer = tokenizer
        self.replies = {k: list(v) for k, v in replies.items()}

    def __call__(self, request) -> list:
        import mlx.core as mx

        text = self.replies[request.purpose].pop(0)
        target = self.tokenizer.encode(text, add_special_tokens=False)
        target.append(self.tokenizer.eos_token_ids and sorted(self.tokenizer.eos_token_ids)[0])
        position = {"i": 0}

        def force(_tokens, logits):
            token = target[min(position["i"], len(target) - 1)]
            position["i"] += 1
            choice = mx.arange(logits.shape[-1]) == token
            return mx.where(choice, mx.zeros_like(logits), mx.full(logits.shape, -mx.inf))

        return [force]
