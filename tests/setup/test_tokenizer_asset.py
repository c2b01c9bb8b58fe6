"""SmolLM2's tokenizer without its weights: the folder `tokenizer_dir()` writes from the
GGUF's metadata (and the GPU bundle carries where the 94 MiB GGUF cannot go) tokenizes
exactly as the GGUF does; the benchmarks' `smollm2-arch` model has SmolLM2-135M's shape."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from podium.config import reset_settings
from podium.models.bootstrap import TOKENIZER_DIRNAME, gguf_path, tokenizer_dir

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
pytestmark = pytest.mark.train

TEXTS = [
    "Hello world! ünïcödé 日本語 \n\t  code: def f(x):\n    return x**2  # ok",
    "<|im_start|>user\nhi<|im_end|>\n<|endoftext|>",
    '{"colour": "blue", "n": [1, 2.5e-3]}',
]
CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Give the colour of the sky as JSON."},
    {"role": "assistant", "content": '{"colour": "blue"}'},
]


@pytest.fixture(scope="module")
def from_gguf():  # type: ignore[no-untyped-def]
    from transformers import AutoTokenizer

    gguf = gguf_path()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def test_the_tokenizer_folder_tokenizes_exactly_as_the_gguf(
    from_gguf, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
):
    from transformers import AutoTokenizer

    monkeypatch.setenv("PODIUM_MODEL_CACHE", str(tmp_path))
    reset_settings()  # settings are read once per process: read them again, and after
    request.addfinalizer(reset_settings)
    folder = tokenizer_dir()
    assert folder == tmp_path / TOKENIZER_DIRNAME
    assert sum(f.stat().st_size for f in folder.iterdir()) < 4 * 2**20  # no weights
    tok = AutoTokenizer.from_pretrained(str(folder))
    for text in TEXTS:
        assert tok(text)["input_ids"] == from_gguf(text)["input_ids"]
    assert tok.all_special_tokens == from_gguf.all_special_tokens
    assert (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id) == (
        from_gguf.bos_token_id,
        from_gguf.eos_token_id,
        from_gguf.pad_token_id,
    )
    assert len(tok) == len(from_gguf)
    assert tok.chat_template == from_gguf.chat_template
    rendered = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert rendered == from_gguf.apply_chat_template(
        CHAT, tokenize=False, add_generation_prompt=True
    )
    # A second call finds the folder: it never reads the GGUF again.
    assert tokenizer_dir() == folder


def test_the_smollm2_arch_model_has_smollm2s_shape():
    from transformers import AutoConfig

    from benchmarks.train import ARCHS

    gguf = gguf_path()
    real = AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name).to_dict()
    for key, value in ARCHS["smollm2-arch"].items():
        if key == "rms_norm_eps":
            assert real[key] == pytest.approx(value)
        else:
            assert real[key] == value, key
    assert real["vocab_size"] == 49152 and real["tie_word_embeddings"] is True
