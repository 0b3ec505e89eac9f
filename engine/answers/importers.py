"""A team's existing training config (axolotl, LLaMA-Factory, TRL) read into answers.

Each importer reads the keys that change the hardware: the model, the method (an adapter,
and a 4-bit or 8-bit base → qlora), the sequence length, the micro-batch, gradient
checkpointing, and the dataset size where the file gives one. Every answer it reads says
from which key; every answer it cannot read says why; keys it does not read are listed, and
one that looks like a misspelt key it reads is named with a suggestion.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path

from engine.answers.quoted import shown
from engine.answers.training_config import Answering, Imported, Settings, put_model
from engine.catalog.load import Catalog
from engine.errors import InputError
from engine.files.jsonio import load_data_file
from engine.files.yamlio import type_name

TOOLS = ("axolotl", "llama-factory", "trl")
TRAINER_BATCH = (8, "transformers' TrainingArguments")
"""``per_device_train_batch_size`` when a Hugging Face Trainer config omits it."""
NEAR_MISS = 0.8
"""How alike an unread key must be to an absent key that is read to be named as a typo."""
EIGHT_BIT = ("an 8-bit base is estimated as qlora's 4-bit one: its weights need about twice "
             "the memory shown")


def import_config(tool: str, path: Path, catalog: Catalog, *,
                  model: str | None = None) -> Imported:
    """The answers a training config of ``tool`` gives (``model`` overrides its model)."""
    data = load_data_file(path)
    if not isinstance(data, Mapping):
        raise InputError(f"expected a mapping of training settings, got {type_name(data)}",
                         path=str(path))
    settings = Settings(data, str(path))
    imported = Imported(tool=tool, path=str(path))
    answering = Answering(settings, imported, catalog)
    answering.put("workload", "fine-tune", f"{tool} trains a pretrained model")
    READERS[tool](answering, model)
    _ignored(settings, imported)
    return imported


def _ignored(settings: Settings, imported: Imported) -> None:
    """Keys not read are listed; one that looks like a misspelling of a key read but absent
    (``sequence_length`` for ``sequence_len``) is named with a suggestion."""
    unread = [str(key) for key in settings.data if key not in settings.consulted]
    absent = sorted(key for key in settings.consulted if key not in settings.data)
    for key in absent:
        close = difflib.get_close_matches(key, unread, n=1, cutoff=NEAR_MISS)
        if close:
            unread.remove(close[0])
            imported.unread.append((close[0], f"not a key {imported.tool} reads; did you "
                                              f"mean '{key}'?"))
    imported.ignored.extend(unread)


# ---------------------------------------------------------------- shared answers
def _method(answering: Answering, adapter: str | None, bits: int | None,
            why: str) -> None:
    """full, lora or qlora from the adapter and the base model's quantisation."""
    if adapter is None and bits:
        answering.miss("method", f"a {bits}-bit base without an adapter ({why}) is no method "
                                 "the estimates know; method stays auto")
    elif adapter is None:
        answering.put("method", "full", f"{why}: every weight is trained")
    elif adapter not in ("lora", "qlora"):
        answering.miss("method", f"{why}: {shown(adapter)} is neither lora nor qlora; "
                                 "method stays auto")
    elif adapter == "qlora" or bits:
        answering.put("method", "qlora", why + (f"; {EIGHT_BIT}" if bits == 8 else ""))
    else:
        answering.put("method", "lora", why)


def _bits(answering: Answering, four: str, eight: str) -> int | None:
    """4 or 8 when the base model is loaded quantised (bitsandbytes flags), else None."""
    four_bit, eight_bit = answering.settings.flag(four), answering.settings.flag(eight)
    return 4 if four_bit else 8 if eight_bit else None


def _whole(answering: Answering, name: str, key: str, what: str,
           default: tuple[int, str] | None = None) -> int | None:
    """An answer read from one whole-number key; else the tool's own ``default`` (value,
    whose default it is), or a line saying it is not in the file."""
    value = answering.settings.whole(key)
    if value is not None:
        answering.put(name, value, key, key=key)
    elif default is not None:
        value, whose = default
        answering.put(name, value, f"{key} not set: {whose} default")
    else:
        answering.miss(name, f"no {key} ({what}); the answers' default applies")
    return value


def _checkpointing(answering: Answering, key: str) -> None:
    value = answering.settings.get(key)
    if value is None:
        answering.miss("gradient_checkpointing", f"no {key}; auto applies")
    elif isinstance(value, bool):
        answering.put("gradient_checkpointing", value, f"{key} {shown(value)}", key=key)
    elif isinstance(value, str):  # axolotl's "unsloth" / "offload": recomputation too
        answering.put("gradient_checkpointing", True, f"{key} {shown(value)}", key=key)
    else:
        raise answering.settings.error(key, f"expected true or false, got {shown(value)}")


def _no_size(answering: Answering, data_key: str, epochs_key: str) -> None:
    """The dataset size is not in these configs: say what the answer would be."""
    settings = answering.settings
    epochs = settings.number(epochs_key)
    names = settings.get(data_key)
    per = f" × epochs ({epochs_key} {epochs:g})" if epochs is not None else " × epochs"
    data = f" of {data_key} {shown(_names(names))}" if names else ""
    answering.miss("training_tokens_b", f"the file gives no dataset size{data}; give "
                                        f"training_tokens_b = examples × tokens each{per} "
                                        "÷ 10^9")
    answering.put("work_unknown", True, "no dataset size: the advice assumes the work and "
                                        "says so at its top until training_tokens_b is given")


def _names(datasets: object) -> object:
    """Dataset names from axolotl's list of mappings (``path``), else the value itself."""
    if isinstance(datasets, list):
        return [d.get("path", d) if isinstance(d, Mapping) else d for d in datasets]
    return datasets


# ---------------------------------------------------------------- the three tools
def _axolotl(answering: Answering, model: str | None) -> None:
    """axolotl: ``base_model``, ``adapter`` + ``load_in_4bit``/``load_in_8bit``,
    ``sequence_len``, ``micro_batch_size``, ``gradient_checkpointing``."""
    settings = answering.settings
    put_model(answering, "base_model", model)
    bits = _bits(answering, "load_in_4bit", "load_in_8bit")
    adapter = settings.text("adapter")
    why = (f"adapter {shown(adapter)}" if adapter else "no adapter") + (
        f", load_in_{bits}bit true" if bits else "")
    _method(answering, adapter, bits, why)
    _whole(answering, "seq_len", "sequence_len", "the sequence length")
    _whole(answering, "micro_batch", "micro_batch_size", "sequences per GPU per step")
    _checkpointing(answering, "gradient_checkpointing")
    _no_size(answering, "datasets", "num_epochs")


def _llama_factory(answering: Answering, model: str | None) -> None:
    """LLaMA-Factory: ``model_name_or_path``, ``finetuning_type`` (default lora) +
    ``quantization_bit``, ``cutoff_len``, ``per_device_train_batch_size``,
    ``disable_gradient_checkpointing`` (checkpointing is on unless it is set), and
    ``max_samples`` × datasets × ``cutoff_len`` × ``num_train_epochs`` as the most tokens."""
    settings = answering.settings
    put_model(answering, "model_name_or_path", model)
    _stage(answering)
    kind = settings.text("finetuning_type")
    bits = settings.whole("quantization_bit")
    if bits is not None and bits not in (4, 8):
        answering.miss("method", f"quantization_bit {bits}: the estimates know 4 and 8 bits; "
                                 "method stays auto")
        bits = None
    why = (f"finetuning_type {shown(kind)}" if kind else
           "finetuning_type not set: LLaMA-Factory's default lora") + (
        f", quantization_bit {bits}" if bits else "")
    adapter = {"lora": "lora", "full": None}.get(kind or "lora", kind)
    _method(answering, adapter, bits, why)
    seq_len = _whole(answering, "seq_len", "cutoff_len", "the sequence length")
    _whole(answering, "micro_batch", "per_device_train_batch_size", "sequences per GPU",
           TRAINER_BATCH)
    off = settings.flag("disable_gradient_checkpointing")
    answering.put("gradient_checkpointing", not off,
                  "disable_gradient_checkpointing true" if off else
                  "LLaMA-Factory checkpoints unless disable_gradient_checkpointing is set",
                  key="disable_gradient_checkpointing")
    _factory_tokens(answering, seq_len)


def _stage(answering: Answering) -> None:
    stage = answering.settings.text("stage")
    if stage not in (None, "sft", "pt"):
        answering.miss("stage", f"{shown(stage)}: the estimates model supervised training; "
                                "preference and reward training also hold a reference or "
                                "reward model")


def _factory_tokens(answering: Answering, seq_len: int | None) -> None:
    """At most ``max_samples`` examples from each dataset, each at most ``cutoff_len``."""
    settings = answering.settings
    samples = settings.whole("max_samples")
    epochs = settings.number("num_train_epochs")
    names = [n for n in str(settings.text("dataset") or "").split(",") if n.strip()]
    if samples is None or seq_len is None or epochs is None or not names:
        _no_size(answering, "dataset", "num_train_epochs")
        return
    tokens_b = float(samples) * len(names) * seq_len * epochs / 1e9  # inf: refused by put
    answering.put("training_tokens_b", float(f"{tokens_b:.6g}"),
                  f"at most: max_samples {samples:,} × {len(names)} dataset(s) × cutoff_len "
                  f"{seq_len:,} × num_train_epochs {epochs:g} ÷ 10^9; shorter examples make "
                  "it less", key="max_samples")


def _trl(answering: Answering, model: str | None) -> None:
    """TRL (``trl sft --config``): ``model_name_or_path``, ``use_peft`` + ``load_in_4bit``/
    ``load_in_8bit``, ``max_length`` (``max_seq_length`` before TRL 0.20),
    ``per_device_train_batch_size``, ``gradient_checkpointing``."""
    settings = answering.settings
    put_model(answering, "model_name_or_path", model)
    bits = _bits(answering, "load_in_4bit", "load_in_8bit")
    peft = settings.flag("use_peft")
    why = ("use_peft true" if peft else "use_peft not set") + (
        f", load_in_{bits}bit true" if bits else "")
    _method(answering, "lora" if peft else None, bits, why)
    older = settings.get("max_length") is None and settings.get("max_seq_length") is not None
    length = "max_seq_length" if older else "max_length"
    _whole(answering, "seq_len", length, "the sequence length", (1024, "TRL's SFTConfig"))
    _whole(answering, "micro_batch", "per_device_train_batch_size", "sequences per GPU",
           TRAINER_BATCH)
    _checkpointing(answering, "gradient_checkpointing")
    _no_size(answering, "dataset_name", "num_train_epochs")


READERS: dict[str, Callable[[Answering, str | None], None]] = {
    "axolotl": _axolotl,
    "llama-factory": _llama_factory,
    "trl": _trl,
}
