"""A training copy of a checkpoint's chat template that marks the assistant's tokens.

TRL's `assistant_only_loss` needs `{% generation %}` markers around what the assistant
says; SmolLM2's template (ChatML, one expression for every role) has none, and TRL's
own patcher does not know it. For ChatML templates the per-message expression is split
so that assistant content and its `<|im_end|>` sit inside the markers; the result is
checked to render exactly as the original before it is used. The saved checkpoint
keeps its original template.
"""

from __future__ import annotations

import re
from typing import Any

from podium.errors import InvalidInput

_MARKED = "{% generation %}"

# The ChatML per-message expression, with any spacing inside the braces; the newline is
# an escape in the Hub's JSON and a raw newline in templates read from GGUF metadata.
_NL = r"'(?:\\n|\n)'"
_CHATML_MESSAGE = re.compile(
    r"\{\{\s*'<\|im_start\|>'\s*\+\s*message\['role'\]\s*\+\s*" + _NL + r"\s*\+\s*"
    r"message\['content'\]\s*\+\s*'<\|im_end\|>'\s*\+\s*" + _NL + r"\s*\}\}"
)
_CHATML_MARKED = (
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\\n' }}{% generation %}"
    "{{ message['content'] + '<|im_end|>' }}{% endgeneration %}{{ '\\n' }}"
    "{% else %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] "
    "+ '<|im_end|>' + '\\n' }}{% endif %}"
)

_PROBE = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Again"},
    {"role": "assistant", "content": "Hello again."},
]


def has_generation_markers(template: str | None) -> bool:
    return template is not None and _MARKED in template.replace("{%-", "{%").replace("-%}", "%}")


def training_template(tokenizer: Any) -> str:
    """A template equivalent to `tokenizer`'s that marks assistant tokens for the loss."""
    original: str | None = tokenizer.chat_template
    if not original:
        raise InvalidInput(
            "The base checkpoint has no chat template; SFT on chat tables needs one "
            "(add `chat_template` to its tokenizer_config.json)."
        )
    if has_generation_markers(original):
        return original
    patched, count = _CHATML_MESSAGE.subn(lambda _m: _CHATML_MARKED, original)
    if count == 1:
        for probe in (_PROBE, _PROBE[1:]):
            same = tokenizer.apply_chat_template(probe, tokenize=False) == (
                tokenizer.apply_chat_template(probe, tokenize=False, chat_template=patched)
            )
            if not same:
                break
        else:
            return patched
    try:
        from trl.chat_template_utils import get_training_chat_template

        patched_by_trl = get_training_chat_template(tokenizer)
    except ValueError:
        patched_by_trl = None
    if patched_by_trl:
        return patched_by_trl
    raise InvalidInput(
        "Cannot mark the assistant turns in this checkpoint's chat template, so the loss "
        "cannot be limited to them. Add {% generation %}...{% endgeneration %} around the "
        "assistant content in its tokenizer_config.json chat_template."
    )
