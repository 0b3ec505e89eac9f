"""The whole bill (issue 31): the training programme's cost a year beside compute, the budget
check and the API comparison on it, frontier-scale clusters, and the guide's API example."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest

from engine.catalog.load import load_catalog
from engine.decide.engine import Decision, recommend
from engine.decide.placements import cluster_sizes
from engine.estimates.cost import api_cost_per_month
from engine.output.brief import brief_items, brief_lines

SMALL_FINE_TUNE: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
    "training_tokens_b": 0.05, "runs_per_year": 12, "usage_pattern": "intermittent",
    "budget_usd": 20000}
FRONTIER: dict[str, Any] = {
    "workload": "pretrain", "model": "llama-3.1-405b", "training_tokens_b": 15000,
    "runs_per_year": 1, "usage_pattern": "intermittent", "budget_usd": 300_000_000,
    "proprietary_data": True, "competitive_moat": True}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own."""
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, check=False, timeout=600)


def _programme(decision: Decision) -> dict[str, Any]:
    found = decision.estimates["programme"]
    assert found is not None
    return dict(found)


def _parts(decision: Decision) -> dict[str, dict[str, Any]]:
    return {p["part"]: p for p in _programme(decision)["parts"]}


def test_the_parts_add_up_and_compute_share_is_the_gpu_time() -> None:
    decision = recommend(SMALL_FINE_TUNE)
    found = _programme(decision)
    parts = _parts(decision)
    assert list(parts) == ["compute", "evaluation", "rework", "people", "data", "storage"]
    total = sum(p["usd_per_year"] for p in parts.values())
    assert found["total_usd_per_year"] == pytest.approx(total, abs=0.05)
    gpu_time = sum(parts[p]["usd_per_year"] for p in ("compute", "evaluation", "rework"))
    assert found["compute_usd_per_year"] == pytest.approx(gpu_time, abs=0.05)
    assert found["compute_share"] == pytest.approx(gpu_time / total, abs=1e-4)
    choice = decision.hardware.choice
    assert choice is not None
    # the counted runs are the pick's cost: the same figure the advice prints
    assert parts["compute"]["usd_per_year"] == pytest.approx(choice.cost.per_year_usd, abs=1)
    for name, part in parts.items():
        assert part["formula"], name
        assert part["sources"] or not part["assumed"], name


def test_people_and_data_dominate_a_small_fine_tune_compute_a_frontier_pretrain() -> None:
    """Published breakdowns: staff is 29-49 % even at the frontier (Epoch AI), and a small
    fine-tune's GPU bill is a rounding error beside one engineer; a frontier pretrain's
    compute dwarfs a small team."""
    small = _programme(recommend(SMALL_FINE_TUNE))
    assert small["compute_share"] < 0.2
    frontier = _programme(recommend(FRONTIER))
    assert frontier["compute_share"] > 0.9


def test_answers_replace_the_policy_defaults() -> None:
    answers = {**SMALL_FINE_TUNE, "ml_engineers_fte": 2, "team_region": "eu",
               "dataset_prep_usd": 12345, "rework_share": 0.5}
    parts = _parts(recommend(answers))
    assert parts["people"]["usd_per_year"] == 2 * 130_000
    assert parts["people"]["assumed"] is False
    assert parts["data"]["usd_per_year"] == 12345 and parts["data"]["assumed"] is False
    assert parts["rework"]["usd_per_year"] == pytest.approx(
        0.5 * parts["compute"]["usd_per_year"], abs=0.05)
    assert parts["rework"]["assumed"] is False
    defaults = _parts(recommend(SMALL_FINE_TUNE))
    assert defaults["people"]["assumed"] and defaults["data"]["assumed"]
    assert defaults["people"]["inputs"]["engineers"] == 0.5


def test_a_hobbyist_budget_counts_no_salary_and_cleaned_data() -> None:
    """A budget of the lowest tier is a hobbyist's or a student's: no engineers are assumed
    (their own time) and the dataset is priced at the low end; said so on the one screen.
    A team that says how many engineers it has is counted, whatever its budget."""
    hobby = {**SMALL_FINE_TUNE, "budget_usd": 300}
    decision = recommend(hobby)
    parts = _parts(decision)
    assert parts["people"]["usd_per_year"] == 0 and parts["people"]["assumed"]
    low = _parts(recommend(SMALL_FINE_TUNE))["data"]
    assert parts["data"]["inputs"]["usd_per_m_tokens"] == low["inputs"]["low_usd_per_m_tokens"]
    assert parts["data"]["usd_per_year"] < low["usd_per_year"] / 5
    # the one screen's programme item (a crowded terminal shortens it to one line)
    said = dict(brief_items(decision))["programme"]
    assert "people not counted (your own time)" in said
    paid = _parts(recommend({**hobby, "ml_engineers_fte": 0.5}))
    assert paid["people"]["usd_per_year"] == 0.5 * 200_000 and not paid["people"]["assumed"]


def test_a_large_fine_tuning_set_is_labelled_only_up_to_the_policys_share() -> None:
    """A fine-tune of billions of tokens is not labelled by hand: its first
    ``fine_tune_labelled_m_tokens_max`` million tokens are priced at the expected rate, the
    rest at the low end; a set within that size, and a pretrain's corpus, at one rate."""
    policy = load_catalog().policy
    rate = policy.data_prep_usd_per_m_tokens["fine-tune"]
    cap = policy.fine_tune_labelled_m_tokens_max.value
    within = _parts(recommend(SMALL_FINE_TUNE))["data"]      # 50 M tokens a run
    assert within["usd_per_year"] == pytest.approx(50 * rate.expected)
    big = _parts(recommend({**SMALL_FINE_TUNE, "training_tokens_b": 4.9}))["data"]
    assert big["usd_per_year"] == pytest.approx(cap * rate.expected + (4900 - cap) * rate.low)
    assert big["inputs"]["labelled_m_tokens"] == cap
    assert big["inputs"]["other_m_tokens"] == pytest.approx(4900 - cap)
    assert "tulu3-sft-mixture-2024" in big["sources"]
    corpus = _parts(recommend({"workload": "pretrain", "model_params_b": 1,
                               "training_tokens_b": 50, "runs_per_year": 1,
                               "budget_usd": 200000}))["data"]
    assert corpus["usd_per_year"] == pytest.approx(
        50_000 * policy.data_prep_usd_per_m_tokens["pretrain"].expected)


def test_a_budget_for_the_whole_programme_leaves_less_for_compute() -> None:
    answers = {**SMALL_FINE_TUNE, "budget_usd": 205_000, "budget_covers": "programme",
               "ml_engineers_fte": 1, "dataset_prep_usd": 1000}
    decision = recommend(answers, trace=True)
    beside = decision.facts["programme_beside_compute_usd_year"]
    assert decision.facts["compute_budget_usd"] == pytest.approx(205_000 - beside, abs=0.01)
    compute_only = recommend({**answers, "budget_covers": "compute"}, trace=True)
    assert compute_only.facts["compute_budget_usd"] == 205_000
    # the tier follows what is left for compute: $205,000 is production, ~$4,000 is mid
    assert compute_only.facts.get("budget_tier") == "production"
    assert decision.facts.get("budget_tier") == "mid"


def test_the_brief_says_the_programme_in_one_line_with_the_json_figures() -> None:
    decision = recommend({**SMALL_FINE_TUNE, "model": "llama-3.1-70b",
                          "training_tokens_b": 0.5})
    found = _programme(decision)
    text = " ".join(brief_lines(decision))
    match = re.search(r"Your training programme: ~\$([\d,]+) a year, of which compute "
                      r"\$([\d,]+) \(([\d.]+)%\)", text)
    assert match is not None, text
    assert int(match[1].replace(",", "")) == round(found["total_usd_per_year"])
    assert int(match[2].replace(",", "")) == round(found["compute_usd_per_year"])
    assert float(match[3]) == pytest.approx(found["compute_share"] * 100, abs=0.06)


def test_the_rented_budget_check_counts_evaluation_and_failed_runs() -> None:
    decision = recommend(SMALL_FINE_TUNE, trace=True)
    choice = decision.hardware.choice
    assert choice is not None and choice.where == "cloud"
    share = decision.facts["rerun_share"]
    assert choice.cost.first_year_usd == pytest.approx(
        choice.cost.per_year_usd * (1 + share), abs=2)


def test_own_model_on_the_whole_bill() -> None:
    """The API is weighed against a model of one's own on the whole bill: serving and the
    training programme a month."""
    answers = {**SMALL_FINE_TUNE, "api_tokens_per_month_m": 80_000}
    facts = recommend(answers, trace=True).facts
    assert facts["own_cost_usd_month"] == pytest.approx(
        facts["own_serving_usd_month"] + facts["own_training_usd_month"], abs=0.01)
    assert facts["api_to_own_cost_ratio"] == pytest.approx(
        facts["api_cost_usd_month"] / facts["own_cost_usd_month"], rel=1e-3)


def test_the_whole_bill_turns_a_close_volume_to_the_api() -> None:
    """A volume at which serving alone is cheaper than the API but serving and the training
    programme together are not: the API is advised (it was not on serving alone)."""
    low, high = 10_000.0, 80_000.0
    for _ in range(30):
        volume = (low + high) / 2
        facts = recommend({**SMALL_FINE_TUNE, "api_tokens_per_month_m": volume},
                          trace=True).facts
        if facts["api_cost_usd_month"] < facts["own_serving_usd_month"]:
            low = volume
        elif facts["api_cost_usd_month"] > facts["own_cost_usd_month"]:
            high = volume
        else:
            break
    else:
        pytest.fail("no volume between serving alone and the whole bill")
    decision = recommend({**SMALL_FINE_TUNE, "api_tokens_per_month_m": volume}, trace=True)
    assert decision.facts["own_serving_usd_month"] < decision.facts["api_cost_usd_month"]
    assert decision.decisions["approach"].choice == "use-api"


def test_the_guides_api_example_at_a_mid_class_price() -> None:
    """1.2 M messages a day × 150 tokens × 30 days = 5,400 M tokens a month: the guide's
    $15,000-60,000 is a mid-class model's price; a small model's today is below it."""
    catalog = load_catalog(None)
    volume = 1.2e6 * 150 * 30 / 1e6
    assert volume == 5400
    current = [a for a in catalog.apis if not catalog.is_stale(a.as_of)]
    mid = [api_cost_per_month(volume, a, catalog.policy).value
           for a in current if a.model_class == "mid"]
    small = [api_cost_per_month(volume, a, catalog.policy).value
             for a in current if a.model_class == "small"]
    assert mid and all(15_000 <= bill <= 60_000 for bill in mid)
    assert small and all(bill < 15_000 for bill in small)


def test_frontier_clusters_are_considered_with_their_fabric_and_caveat() -> None:
    decision = recommend(FRONTIER)
    choice = decision.hardware.choice
    assert choice is not None and choice.count > 1024 and choice.nodes > 1
    warning = next(w for w in decision.warnings if w.id == "frontier-cluster")
    assert "by contract, months ahead" in warning.text
    assert f"{choice.count:,}×" in warning.text and "infiniband" in warning.text
    from engine.decide.engine import load_engine
    from engine.output.text import render_text

    text = render_text(decision, load_engine().rulebook)
    assert re.search(r"(?<![\d,])\d{4,}× ", text) is None, "counts are grouped: 22,528×"


def test_cluster_sizes_step_above_a_thousand_gpus() -> None:
    policy = load_catalog(None).policy
    sizes = cluster_sizes(8, policy)
    assert sizes[0] == 16 and sizes == sorted(set(sizes))
    assert all(s % 8 == 0 for s in sizes)
    assert max(sizes) == int(policy.max_gpus_considered.value)
    above = [s for s in sizes if s > policy.cluster_step_above_gpus.value]
    assert above[:3] == [1152, 1280, 1408] and 16384 in above
    assert len(sizes) < 200


def test_estimate_training_refuses_a_cluster_recommend_does_not_consider() -> None:
    result = run_cli("estimate", "training", "--model", "llama-3.1-405b", "--gpu", "b200",
                     "--gpus", "40000")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --gpus: at most 32,768 GPUs, the largest cluster `recommend` considers "
        "(max_gpus_considered in catalog/policy.yaml)"]
    ok = run_cli("estimate", "training", "--workload", "pretrain", "--model", "llama-3.1-405b",
                 "--gpu", "b200", "--gpus", "16384", "--tokens-b", "15000")
    assert ok.returncode == 0 and "sold by contract" in " ".join(ok.stdout.split())


def test_a_fine_tune_keeps_its_trained_weights_a_pretrain_its_resumable_checkpoints() -> None:
    """A 70B full fine-tune run twice a year keeps what its runs trained (16-bit weights,
    141 GB a model) all year, not their optimizer states (14 bytes a parameter with the
    weights, 988 GB each); rented, it keeps no base weights (each run downloads them), owned
    GPUs keep them too; a pretrain keeps resumable checkpoints to train further."""
    from engine.estimates.programme import kept_gb
    from engine.estimates.runs import checkpoint_gb, trained_gb
    from engine.estimates.shape import shape_of_preset

    catalog = load_catalog()
    policy = catalog.policy
    shape = shape_of_preset(catalog.models["llama-3.1-70b"])
    assert kept_gb(shape, "full", policy) == trained_gb(shape, "full", policy)
    assert kept_gb(shape, "full", policy) < checkpoint_gb(shape, "full", policy) / 6
    assert kept_gb(shape, "lora", policy) == trained_gb(shape, "lora", policy)
    assert kept_gb(shape, "pretrain", policy) == checkpoint_gb(shape, "pretrain", policy)
    decision = recommend({"workload": "fine-tune", "model": "llama-3.1-70b", "method": "full",
                          "training_tokens_b": 0.1, "runs_per_year": 2,
                          "usage_pattern": "intermittent", "budget_usd": 5000})
    assert decision.hardware.choice is not None and decision.hardware.choice.where == "cloud"
    stored = _parts(decision)["storage"]["inputs"]
    models = policy.checkpoints_kept.value * trained_gb(shape, "full", policy)
    assert stored["gb"] == pytest.approx(models, rel=0.01)
    assert stored["base_weights_gb"] == 0
    owned = recommend({"workload": "fine-tune", "model": "llama-3.1-70b",  # scenario 49
                       "training_tokens_b": 0.5, "runs_per_year": 24,
                       "usage_pattern": "continuous", "budget_usd": 100_000,
                       "upfront_capex": True, "owned_gpu": "a100-80gb",
                       "owned_gpu_count": 8})
    assert owned.hardware.choice is not None and owned.hardware.choice.where == "local"
    kept = _parts(owned)["storage"]["inputs"]
    adapters = policy.checkpoints_kept.value * trained_gb(
        shape, owned.hardware.choice.method, policy)
    base = shape.params * policy.weight_bytes_16bit.value / 1e9
    assert kept["base_weights_gb"] == pytest.approx(base, rel=0.01)
    data = 0.5e9 * policy.stored_bytes_per_token.value / 1e9  # its tokens
    assert kept["gb"] == pytest.approx(data + adapters + base, rel=0.01)


def test_data_waits_between_runs_where_storage_costs_least() -> None:
    """A GPU cloud's filesystem ($0.20 a GB-month at Lambda, $0.07 at RunPod) is not where a
    corpus waits between runs: object storage is, at the policy's price; a hyperscaler's own
    object storage at no more than that is used as listed; on premises, the policy's."""
    from engine.estimates.programme import storage_price

    catalog = load_catalog()
    policy = catalog.policy
    cloud = policy.storage_usd_per_gb_month["cloud"].value
    for provider_id in ("lambda", "runpod"):
        provider = catalog.providers[provider_id]
        assert provider.storage is not None and provider.storage.usd_per_gb_month > cloud
        price = storage_price(provider, False, policy)
        assert price.value == cloud and provider.name in price.formula
    for provider_id in ("aws", "gcp", "azure"):
        provider = catalog.providers[provider_id]
        assert provider.storage is not None
        assert storage_price(provider, False, policy).value == provider.storage.usd_per_gb_month
    assert storage_price(None, True, policy).value == policy.storage_usd_per_gb_month[
        "local"].value

