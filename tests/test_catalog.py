"""The bundled catalog: it loads, every figure is sourced, and broken copies fail precisely."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.catalog.load import CATALOG_FILES, Catalog, load_catalog
from engine.errors import CatalogError
from engine.files.yamlio import load_yaml_file
from engine.resources import bundled_dir

REPO = Path(__file__).resolve().parent.parent
KNOWLEDGE_MD = REPO / "docs" / "sources" / "knowledge.md"

REQUIRED_GPUS = (
    "t4", "l4", "rtx-4060-ti-16gb", "rtx-4070-ti-super", "rtx-4090", "rtx-5070-ti", "rtx-5090",
    "a100-40gb", "a100-80gb", "a800-80gb", "l40s", "h100-pcie", "h100-sxm", "h200", "b200",
)


def _raw(name: str) -> Any:
    return load_yaml_file(bundled_dir("catalog") / f"{name}.yaml")


def _walk(node: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every (dotted path, mapping) in parsed YAML data."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _walk(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            ident = item.get("id", i) if isinstance(item, dict) else i
            yield from _walk(item, f"{where}[{ident}]")


def _replace_once(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (which must occur once) and return the 1-based line where it started."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


def _line_of(path: Path, line_text: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines.index(line_text) + 1


# ------------------------------------------------------------------ the bundled catalog


def test_bundled_catalog_loads(catalog: Catalog) -> None:
    assert catalog.gpus and catalog.offers and catalog.models and catalog.apis
    assert len(catalog.hash) == 64
    assert set(catalog.texts) == {f"catalog/{n}.yaml" for n in CATALOG_FILES}


@pytest.mark.slow
@pytest.mark.parametrize("name", CATALOG_FILES)
def test_every_sources_list_is_non_empty_and_known(name: str) -> None:
    known = {s["id"] for s in _raw("sources")["sources"]}
    cited = 0
    for where, mapping in _walk(_raw(name), name):
        if "sources" not in mapping or (name == "sources" and where == "sources"):
            continue
        refs = mapping["sources"]
        assert isinstance(refs, list) and refs, f"{where}.sources is empty"
        unknown = [r for r in refs if r not in known]
        assert not unknown, f"{where}.sources cites unknown ids {unknown}"
        cited += len(refs)
    if name != "sources":
        assert cited > 0


@pytest.mark.parametrize(
    ("file", "key"), [("clouds", "offers"), ("clouds", "apis"), ("gpus", "gpus")]
)
def test_every_price_is_dated(file: str, key: str) -> None:
    entries = _raw(file)[key]
    prices = [e["purchase"] for e in entries if e.get("purchase")] if key == "gpus" else entries
    assert prices
    for entry in prices:
        assert entry.get("as_of"), f"{file}.{key}: a price without as_of: {entry}"


def test_every_knowledge_id_is_a_source(catalog: Catalog) -> None:
    pattern = re.compile(r"^- `([^`]+)`(?: \([^)]*\))?:")
    ids = [m.group(1) for line in KNOWLEDGE_MD.read_text(encoding="utf-8").splitlines()
           if (m := pattern.match(line))]
    assert len(ids) >= 50
    missing = [i for i in ids if i not in catalog.sources]
    assert not missing
    assert all(catalog.sources[i].kind == "knowledge" for i in ids)


def test_required_gpus_exist(catalog: Catalog) -> None:
    assert set(REQUIRED_GPUS) <= set(catalog.gpus)


def test_t4_has_no_bf16_and_trains_at_its_fp16_rate(catalog: Catalog) -> None:
    t4 = catalog.gpu("t4")
    assert t4.bf16 is False and t4.dense_bf16_tflops is None
    assert t4.training_tflops == t4.dense_fp16_tflops == 65


def test_hyperscalers_and_specialised_providers(catalog: Catalog) -> None:
    kinds = {p.id: p.kind for p in catalog.providers.values()}
    assert {k for k, v in kinds.items() if v == "hyperscaler"} == {"aws", "azure", "gcp"}
    assert {"lambda", "runpod", "coreweave"} <= {k for k, v in kinds.items()
                                                 if v == "specialised"}


def test_every_offer_names_a_catalog_gpu_and_provider(catalog: Catalog) -> None:
    for offer in catalog.offers:
        assert offer.gpu in catalog.gpus
        assert offer.provider in catalog.providers


def test_unknown_gpu_lookup_suggests(catalog: Catalog) -> None:
    with pytest.raises(CatalogError) as exc:
        catalog.gpu("rtx-4091")
    assert str(exc.value) == "unknown GPU 'rtx-4091'; did you mean 'rtx-4090'?"


# ------------------------------------------------------------------ broken copies


@pytest.mark.slow
def test_unknown_source_id_names_file_line_field_and_suggestion(catalog_copy: Path) -> None:
    gpus = catalog_copy / "gpus.yaml"
    _replace_once(gpus, "  - hw.rtx4090\n  - notebookcheck", "  - hw.rtx409\n  - notebookcheck")
    line = _line_of(gpus, "- id: rtx-4090")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{gpus}:{line}: gpus[rtx-4090].sources: unknown source 'hw.rtx409'; "
        "did you mean 'hw.rtx4090'?"
    )


def test_offer_citing_unknown_gpu(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    _replace_once(clouds, "- id: lambda-h100\n  provider: lambda\n  gpu: h100-sxm\n",
                  "- id: lambda-h100\n  provider: lambda\n  gpu: h100-sx\n")
    line = _line_of(clouds, "- id: lambda-h100")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{clouds}:{line}: offers[lambda-h100].gpu: unknown gpu 'h100-sx'; "
        "did you mean 'h100-sxm'?"
    )


@pytest.mark.parametrize(("card", "message"), [
    ("a100-80g", "unknown GPU 'a100-80g'; did you mean 'a100-80gb'?"),
    ("rtx-4090", "GPU 'rtx-4090' does not fit this platform (form or socket); expected one "
                 "it takes: a100-40gb, a100-80gb, a800-80gb, b200, b300, gb200, gh200, "
                 "h100-sxm, h200"),
])
def test_a_platforms_draw_for_a_card_names_a_card_it_takes(
        catalog_copy: Path, card: str, message: str) -> None:
    platforms = catalog_copy / "platforms.yaml"
    _replace_once(platforms, "    a800-80gb: 3300\n", f"    {card}: 3300\n")
    line = _line_of(platforms, "- id: hgx-8")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == f"{platforms}:{line}: platforms[hgx-8].watts_by_gpu: {message}"


def test_unknown_key_in_gpu_entry(catalog_copy: Path) -> None:
    gpus = catalog_copy / "gpus.yaml"
    line = _replace_once(gpus, "  memory_type: GDDR6X\n  bandwidth_gbps: 1008\n",
                         "  memory_typ: GDDR6X\n  bandwidth_gbps: 1008\n")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{gpus}:{line}: gpus[rtx-4090].memory_typ: unknown key; did you mean 'memory_type'?"
    )


@pytest.mark.slow
def test_nan_is_refused(catalog_copy: Path) -> None:
    gpus = catalog_copy / "gpus.yaml"
    _replace_once(gpus, "  dense_fp16_tflops: 165.2\n  tdp_w: 450\n",
                  "  dense_fp16_tflops: 165.2\n  tdp_w: .nan\n")
    line = _line_of(gpus, "  tdp_w: .nan")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{gpus}:{line}: gpus[rtx-4090].tdp_w: "
        "expected a finite number (NaN and Infinity are not allowed)"
    )


def test_nan_in_policy_constant_is_refused(catalog_copy: Path) -> None:
    policy = catalog_copy / "policy.yaml"
    line = _replace_once(policy, "    value: 0.516\n", "    value: .inf\n")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{policy}:{line}: policy.nf4_bytes_per_param.value: "
        "expected a finite number (NaN and Infinity are not allowed)"
    )


@pytest.mark.slow
def test_duplicate_id(catalog_copy: Path) -> None:
    gpus = catalog_copy / "gpus.yaml"
    line = _replace_once(gpus, "- id: l4\n", "- id: t4\n")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == f"{gpus}:{line}: gpus: duplicate id 't4'"


def test_yaml_alias_refused(catalog_copy: Path) -> None:
    gpus = catalog_copy / "gpus.yaml"
    line = _replace_once(gpus, "  vram_gb: 24\n  vram_unit: GiB\n  memory_type: GDDR6X\n"
                         "  bandwidth_gbps: 1008\n",
                         "  vram_gb: &v 24\n  vram_unit: GiB\n  memory_type: GDDR6X\n"
                         "  bandwidth_gbps: *v\n")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == f"{gpus}:{line}: YAML anchors and aliases are not allowed"


def test_python_tag_refused(catalog_copy: Path, tmp_path: Path) -> None:
    gpus = catalog_copy / "gpus.yaml"
    marker = tmp_path / "pwned"
    line = _replace_once(
        gpus, "  tdp_w: 450\n", f"  tdp_w: !!python/object/apply:os.system ['touch {marker}']\n"
    )
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{gpus}:{line}: YAML error: unsupported YAML tag or value (could not determine a "
        "constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system')"
    )
    assert not marker.exists()


def test_non_utf8_file_refused(catalog_copy: Path) -> None:
    models = catalog_copy / "models.yaml"
    raw = models.read_bytes()
    models.write_bytes(b"# caf\xe9\n" + raw)
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == f"{models}: not valid UTF-8 (byte 5)"


@pytest.mark.slow
def test_missing_file(catalog_copy: Path) -> None:
    (catalog_copy / "questions.yaml").unlink()
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == f"{catalog_copy / 'questions.yaml'}: file not found"


def test_top_level_list_names_plain_type(catalog_copy: Path) -> None:
    models = catalog_copy / "models.yaml"
    models.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == f"{models}:1: expected a mapping at the top level, got list"


# ------------------------------------------------------------------ --prices override

PRICES = """\
sources:
- id: our-quote
  kind: price-list
  title: Quote from our reseller
  publisher: us
  date: '2026-02'
offers:
- id: lambda-h100
  provider: lambda
  gpu: h100-sxm
  gpus_per_instance: 8
  regions: [us]
  on_demand_usd_per_gpu_hour: 1.99
  as_of: '2026-02-01'
  sources: [our-quote]
- id: our-deal-4090
  provider: runpod
  gpu: rtx-4090
  gpus_per_instance: 1
  regions: [us]
  on_demand_usd_per_gpu_hour: 0.29
  as_of: '2026-02-01'
  sources: [our-quote]
"""


def test_prices_override_replaces_by_id_and_adds(catalog: Catalog, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES, encoding="utf-8")
    merged = load_catalog(prices=prices)
    by_id = {o.id: o for o in merged.offers}
    assert by_id["lambda-h100"].on_demand_usd_per_gpu_hour == 1.99
    assert by_id["lambda-h100"].sources == ["our-quote"]
    assert by_id["our-deal-4090"].gpu == "rtx-4090"
    assert len(merged.offers) == len(catalog.offers) + 1
    assert [o.id for o in merged.offers][: len(catalog.offers)] == [o.id for o in catalog.offers]
    assert "our-quote" in merged.sources
    assert merged.hash != catalog.hash


@pytest.mark.slow
def test_prices_override_with_unknown_source_fails(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.replace("sources: [our-quote]\n", "sources: [our-quot]\n", 1),
                      encoding="utf-8")
    with pytest.raises(CatalogError) as exc:
        load_catalog(prices=prices)
    assert str(exc.value).endswith(
        "offers[lambda-h100].sources: unknown source 'our-quot'; did you mean 'our-quote'?"
    )


def test_prices_override_unknown_key(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.replace("  on_demand_usd_per_gpu_hour: 1.99",
                                     "  on_demand_usd_per_hour: 1.99"), encoding="utf-8")
    line = prices.read_text(encoding="utf-8").splitlines().index(
        "  on_demand_usd_per_hour: 1.99") + 1
    with pytest.raises(CatalogError) as exc:
        load_catalog(prices=prices)
    assert str(exc.value) == (
        f"{prices}:{line}: offers[lambda-h100].on_demand_usd_per_hour: unknown key; "
        "did you mean 'on_demand_usd_per_gpu_hour'?"
    )
