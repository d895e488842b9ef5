"""Token-level pipeline: task, reward, dataset, losses against the numpy kernels, experiment."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl import kernels as K
from reference_impl.common import seed_everything
from reference_impl.language import (
    TokenILQLConfig,
    TokenPolicy,
    TokenQV,
    awr_loss,
    bc_loss,
    greedy_decode,
    ilql_losses,
    ilql_scores,
    language_offline_experiment,
    make_token_batch,
    prompt_baselines,
    return_weights,
    returns_to_go,
    rwr_loss,
    train_token_rwr,
)
from reference_impl.language_task import (
    ANSWERS,
    EOS,
    HELDOUT_ANSWERS,
    HELDOUT_PROMPTS,
    LANGUAGE_METHODS,
    MAX_RESPONSE_TOKENS,
    N_ACTIONS,
    PAD,
    PARTIAL_CREDIT,
    PROMPTS,
    VOCAB,
    TokenEpisode,
    collect_language_dataset,
    encode,
    response_reward,
    summarize_language_dataset,
    token_text,
)


def ep(prompt_index, text, reward=None):
    response = tuple(encode(text))
    r = response_reward(prompt_index, response) if reward is None else reward
    return TokenEpisode(prompt_index, response, r)


# --------------------------------------------------------------------------- task
def test_vocabulary_and_prompts():
    assert VOCAB[EOS] == "<eos>" and VOCAB[PAD] == "<pad>"
    assert all(VOCAB[i] in "0123456789<eos>" for i in range(N_ACTIONS))  # response tokens first
    assert PROMPTS[1] == "8+7=" and ANSWERS[1] == "15"
    assert len(ANSWERS) == len(PROMPTS)


def test_token_text():
    assert token_text([2, 6, EOS]) == "15<eos>"
    assert token_text(np.array(encode("8+7="))) == "8+7="
    assert token_text(torch.tensor([EOS])) == "<eos>"
    assert token_text([]) == ""
    for prompt in PROMPTS:
        assert token_text(encode(prompt)) == prompt
    with pytest.raises(ValueError, match="outside"):
        token_text([len(VOCAB)])
    with pytest.raises(ValueError, match="integer"):
        token_text([1.5])
    with pytest.raises(ValueError, match="1-D"):
        token_text([[1, 2]])


@pytest.mark.parametrize(
    "text, expected",
    [
        ("15<eos>", 1.0),
        ("16<eos>", PARTIAL_CREDIT * 1 / 2),  # right first digit
        ("150<eos>", PARTIAL_CREDIT),  # the whole answer, then a stray digit
        ("51<eos>", 0.0),
        ("<eos>", 0.0),
        ("15", 0.0),  # never ended: no credit at all
        ("15<eos>3", 1.0),  # tokens after <eos> are not part of the response
    ],
)
def test_reward_of_8_plus_7(text, expected):
    assert response_reward(1, encode(text)) == pytest.approx(expected)


def test_reward_rejects_bad_input():
    with pytest.raises(ValueError, match="prompt_index"):
        response_reward(len(PROMPTS), [EOS])
    with pytest.raises(ValueError, match="response"):
        response_reward(0, encode("7="))


@settings(max_examples=200, deadline=None)
@given(p=st.integers(0, len(PROMPTS) - 1), response=st.lists(st.integers(0, N_ACTIONS - 1), max_size=6))
def test_reward_is_bounded_and_one_only_for_the_exact_answer(p, response):
    r = response_reward(p, response)
    assert 0.0 <= r <= 1.0
    exact = EOS in response and token_text(response[: response.index(EOS)]) == ANSWERS[p]
    assert (r == 1.0) == exact
    assert r <= PARTIAL_CREDIT or exact


# --------------------------------------------------------------------------- dataset
def test_dataset_alignment_and_composition():
    episodes = collect_language_dataset(40, np.random.default_rng(0))
    assert len(episodes) == 40 * len(PROMPTS)
    assert [e.prompt_index for e in episodes[::40]] == list(range(len(PROMPTS)))  # prompt-major
    for e in episodes:
        assert e.response[-1] == EOS and EOS not in e.response[:-1]
        assert len(e.response) <= MAX_RESPONSE_TOKENS
        assert e.reward == response_reward(e.prompt_index, e.response)
    summary = summarize_language_dataset(episodes)
    assert summary["episodes"] == 480 and summary["prompts"] == len(PROMPTS)
    # noisy log: exact answers are a minority, the common slip is wrong
    assert 0.15 < summary["exact_fraction"] < 0.4
    assert summary["exact_fraction"] + summary["partial_fraction"] + summary["zero_fraction"] == pytest.approx(1.0)
    kinds = [e.kind for e in episodes]
    assert kinds.count("slip") > kinds.count("exact")


def test_dataset_rejects_bad_size():
    with pytest.raises(ValueError, match="episodes_per_prompt"):
        collect_language_dataset(0, np.random.default_rng(0))


def test_token_batch_layout():
    batch = make_token_batch([ep(1, "15<eos>"), ep(0, "7<eos>"), ep(1, "16<eos>")])
    assert batch.tokens.shape == (3, 7) and batch.actions.shape == (3, 3)
    assert batch.mask.tolist() == [[True, True, True], [True, True, False], [True, True, True]]
    # the token right after each state's prefix is the logged action
    for i in range(3):
        for t in range(3):
            if batch.mask[i, t]:
                assert batch.tokens[i, batch.state_index[i, t] + 1] == batch.actions[i, t]
    assert batch.state_index[0].tolist() == [3, 4, 5]  # prompt "8+7=" has 4 tokens
    assert batch.rewards.tolist() == [[0, 0, 1.0], [0, 1.0, 0], [0, 0, pytest.approx(0.1)]]
    assert batch.terminated.tolist() == [[False, False, True], [False, True, False], [False, False, True]]


@pytest.mark.parametrize("response, problem", [((), "empty"), ((2, EOS, 3, EOS), "continues after"), ((11, EOS), "non-response")])
def test_token_batch_rejects_malformed_episodes(response, problem):
    with pytest.raises(ValueError, match=problem):
        make_token_batch([TokenEpisode(0, response, 0.0)])


# --------------------------------------------------------------------------- losses vs numpy kernels
def _hand_batch():
    return make_token_batch([ep(1, "15<eos>"), ep(0, "8<eos>"), ep(3, "15<eos>"), ep(7, "3<eos>")])


def test_bc_loss_equals_the_numpy_masked_token_nll():
    seed_everything(0)
    policy, batch = TokenPolicy(), _hand_batch()
    logp_all = torch.log_softmax(policy(batch.tokens, batch.state_index), -1).detach().numpy()
    taken = np.take_along_axis(logp_all, batch.actions.numpy()[..., None], -1)[..., 0]
    taken[~batch.mask.numpy()] = -np.inf  # padding is never read
    expected = K.masked_token_nll(taken, batch.mask.numpy())
    assert bc_loss(policy, batch).item() == pytest.approx(expected, rel=1e-6)


def test_ilql_terms_equal_the_numpy_kernels():
    seed_everything(1)
    model, target, batch = TokenQV(), TokenQV(), _hand_batch()
    cfg = TokenILQLConfig(gamma=0.9, expectile=0.7, cql_weight=0.3)
    terms = ilql_losses(model, target, batch, cfg)
    with torch.no_grad():
        q, v = (x.numpy() for x in model(batch.tokens, batch.state_index))
        _, v_next = (x.numpy() for x in model(batch.tokens, batch.state_index + 1))
        q_bar, _ = (x.numpy() for x in target(batch.tokens, batch.state_index))
    m, a = batch.mask.numpy(), batch.actions.numpy()
    q_taken = np.take_along_axis(q, a[..., None], -1)[..., 0][m]
    done = batch.terminated.numpy()[m]
    y = batch.rewards.numpy()[m] + 0.9 * np.where(done, 0.0, v_next[m])
    # terminal steps never bootstrap: y is the reward itself there
    np.testing.assert_allclose(y[done], batch.rewards.numpy()[m][done])
    assert terms["q"].item() == pytest.approx(np.mean((q_taken - y) ** 2), rel=1e-5)
    q_bar_taken = np.take_along_axis(q_bar, a[..., None], -1)[..., 0][m]
    assert terms["v"].item() == pytest.approx(K.expectile_loss(q_bar_taken - v[m], 0.7), rel=1e-5)
    assert terms["cql"].item() == pytest.approx(K.cql_discrete_penalty(q[m], a[m]), rel=1e-5)
    total = terms["q"] + terms["v"] + 0.3 * terms["cql"]
    assert terms["total"].item() == pytest.approx(total.item())


def test_awr_loss_weights_each_token_by_its_capped_advantage():
    seed_everything(2)
    policy, qv, batch = TokenPolicy(), TokenQV(), _hand_batch()
    cfg = TokenILQLConfig(awr_beta=2.0, max_weight=1.5)
    with torch.no_grad():
        q, v = (x.numpy() for x in qv(batch.tokens, batch.state_index))
        logp = torch.log_softmax(policy(batch.tokens, batch.state_index), -1).numpy()
    a, m = batch.actions.numpy(), batch.mask.numpy()
    adv = np.take_along_axis(q, a[..., None], -1)[..., 0] - v
    w = K.iql_advantage_weights(adv, 2.0, 1.5)
    taken = np.take_along_axis(logp, a[..., None], -1)[..., 0]
    expected = K.masked_token_nll(w * taken, m)
    assert awr_loss(policy, qv, batch, cfg).item() == pytest.approx(expected, rel=1e-5)


def test_custom_kernels_drive_the_losses():
    calls = []

    def spy_nll(logp, mask):
        calls.append("nll")
        return -(logp * mask).sum() / mask.sum()

    seed_everything(0)
    bc_loss(TokenPolicy(), _hand_batch(), spy_nll)
    assert calls == ["nll"]
    with pytest.raises(ValueError, match="unknown"):
        ilql_losses(TokenQV(), TokenQV(), _hand_batch(), TokenILQLConfig(), kernels={"typo": spy_nll})


# --------------------------------------------------------------------------- decoding
def test_ilql_scores_shift_the_behavior_logprobs_by_the_advantage():
    seed_everything(3)
    policy, qv = TokenPolicy(), TokenQV()
    tokens = torch.tensor([encode("8+7=1")])
    index = torch.tensor([[4]])
    with torch.no_grad():
        scores = ilql_scores(policy, qv, beta=2.5)(tokens, index)
        q, v = qv(tokens, index)
        expected = torch.log_softmax(policy(tokens, index), -1) + 2.5 * (q - v[..., None])
    torch.testing.assert_close(scores, expected)
    with pytest.raises(ValueError, match="beta"):
        ilql_scores(policy, qv, beta=-1.0)


def test_greedy_decode_follows_the_scores_and_stops_at_eos_or_the_limit():
    def prefer(target_text):
        wanted = encode(target_text)

        def score(tokens, index):
            out = torch.zeros(tokens.shape[0], 1, N_ACTIONS)
            for row in range(tokens.shape[0]):
                step = int(index[row, 0]) - 3  # prompts have 4 tokens
                out[row, 0, wanted[min(step, len(wanted) - 1)]] = 1.0
            return out

        return score

    assert greedy_decode(prefer("42<eos>"), [0, 5]) == [(5, 3, EOS), (5, 3, EOS)]
    assert greedy_decode(prefer("11111111"), [0]) == [(2,) * MAX_RESPONSE_TOKENS]


# --------------------------------------------------------------------------- experiment
def test_smoke_experiment_is_aligned_with_prompts_and_deterministic():
    runs = [language_offline_experiment(seed=5, episodes_per_prompt=4, bc_epochs=1, iql_epochs=1) for _ in range(2)]
    result = runs[0]
    assert result["dataset"]["episodes"] == 4 * len(PROMPTS)
    assert tuple(result["evaluation"]) == tuple(result["heldout_evaluation"]) == LANGUAGE_METHODS
    for split, key, prompts in (("train", "evaluation", PROMPTS), ("heldout", "heldout_evaluation", HELDOUT_PROMPTS)):
        for row in result[key].values():
            assert len(row["sequences"]) == len(row["rewards"]) == len(prompts)
            assert row["rewards"] == [response_reward(p, s, split) for p, s in enumerate(row["sequences"])]
            assert row["exact_match"] == pytest.approx(np.mean([r == 1.0 for r in row["rewards"]]))
            assert row["mean_reward"] == pytest.approx(np.mean(row["rewards"]))
    for key in ("evaluation", "heldout_evaluation", "losses"):
        assert runs[0][key] == runs[1][key]


def test_return_weighted_bc_trains_last_so_the_other_methods_do_not_depend_on_it(monkeypatch):
    """Adding the ablation changed no other method's numbers: it draws from the rng after them."""
    import reference_impl.language as language

    full = language_offline_experiment(seed=5, episodes_per_prompt=4, bc_epochs=1, iql_epochs=1)
    calls = []
    monkeypatch.setattr(language, "train_token_rwr", lambda episodes, *a, **k: calls.append(1) or (TokenPolicy(), [0.0]))
    without = language_offline_experiment(seed=5, episodes_per_prompt=4, bc_epochs=1, iql_epochs=1)
    assert calls == [1]
    for m in ("behavior_cloning", "advantage_weighted_bc", "ilql_like"):
        assert without["evaluation"][m] == full["evaluation"][m]
        assert without["heldout_evaluation"][m] == full["heldout_evaluation"][m]


def test_experiment_rejects_bad_arguments():
    with pytest.raises(ValueError, match="iql_epochs"):
        language_offline_experiment(seed=0, episodes_per_prompt=2, bc_epochs=1, iql_epochs=0)
    with pytest.raises(ValueError, match="seed"):
        language_offline_experiment(seed="0", episodes_per_prompt=2, bc_epochs=1, iql_epochs=1)


# --------------------------------------------------------------------------- held-out prompts
def test_heldout_prompts_are_new_sums_and_never_in_the_log():
    assert len(HELDOUT_PROMPTS) == len(HELDOUT_ANSWERS) >= 4
    assert not set(HELDOUT_PROMPTS) & set(PROMPTS)
    assert tuple(str(int(p[0]) + int(p[2])) for p in HELDOUT_PROMPTS) == HELDOUT_ANSWERS
    train = {tuple(encode(p)) for p in PROMPTS}
    batch = make_token_batch(collect_language_dataset(6, np.random.default_rng(3)))
    for row in batch.tokens.tolist():
        prompt = tuple(row[: len(encode(PROMPTS[0]))])
        assert prompt in train and token_text(list(prompt)) not in HELDOUT_PROMPTS


def test_response_reward_and_greedy_decode_on_the_heldout_split():
    j = HELDOUT_PROMPTS.index("2+3=")
    assert response_reward(j, encode("5<eos>"), "heldout") == 1.0
    with pytest.raises(ValueError, match="prompt_index"):
        response_reward(len(HELDOUT_PROMPTS), [EOS], "heldout")
    with pytest.raises(ValueError, match="split"):
        response_reward(0, [EOS], "test")
    seen = []

    def score(tokens, index):
        seen.extend(token_text([t for t in row if t != PAD]) for row in tokens.tolist())
        out = torch.zeros(tokens.shape[0], 1, N_ACTIONS)
        out[:, 0, EOS] = 1.0
        return out

    assert greedy_decode(score, split="heldout") == [(EOS,)] * len(HELDOUT_PROMPTS)
    assert seen == list(HELDOUT_PROMPTS)
    with pytest.raises(ValueError, match="split"):
        greedy_decode(score, split="valid")


# --------------------------------------------------------------------------- return-weighted BC
def test_returns_to_go_discounts_the_terminal_reward_back():
    rewards = torch.tensor([[0.0, 0.0, 1.0], [0.5, 0.0, 0.0]])
    mask = torch.tensor([[True, True, True], [True, False, False]])
    g = returns_to_go(rewards, mask, 0.5)
    assert torch.allclose(g, torch.tensor([[0.25, 0.5, 1.0], [0.5, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="gamma"):
        returns_to_go(rewards, mask, 1.5)
    with pytest.raises(ValueError, match="rewards"):
        returns_to_go(rewards[:, :2], mask, 0.5)


def test_prompt_baselines_are_each_prompts_mean_logged_return():
    episodes = [ep(0, "7<eos>"), ep(0, "8<eos>"), ep(1, "15<eos>"), ep(1, "16<eos>")]
    b = prompt_baselines(episodes, gamma=0.9)
    assert b[0] == pytest.approx(0.5 * 0.9)  # "7<eos>" earns 1 two tokens in, "8<eos>" 0
    assert b[1] == pytest.approx(0.5 * 0.81 * (1.0 + PARTIAL_CREDIT / 2))
    assert np.isnan(b[2:]).all()
    with pytest.raises(ValueError, match="episodes"):
        prompt_baselines([], 0.9)


@settings(max_examples=60, deadline=None)
@given(
    low=st.floats(0.0, 1.0),
    high=st.floats(0.0, 1.0),
    base=st.floats(-1.0, 1.0),
    beta=st.floats(0.0, 20.0),
    cap=st.floats(1.0, 1e3),
    length=st.integers(1, 4),
)
def test_return_weights_are_monotone_in_the_return_capped_and_zero_on_padding(low, high, base, beta, cap, length):
    low, high = min(low, high), max(low, high)
    rewards = torch.zeros(2, 4)
    rewards[0, length - 1], rewards[1, length - 1] = low, high
    mask = torch.zeros(2, 4, dtype=torch.bool)
    mask[:, :length] = True
    w = return_weights(rewards, mask, torch.full((2,), base), 0.99, beta, cap)
    real = w[mask]
    assert torch.all(real > 0) and torch.all(real <= cap * (1 + 1e-6))
    assert torch.all(w[~mask] == 0)
    assert torch.all(w[1, :length] >= w[0, :length] * (1 - 1e-6))  # a higher return never weighs less
    # Same return, higher baseline: never more weight.
    w_high_base = return_weights(rewards, mask, torch.full((2,), base + 0.5), 0.99, beta, cap)
    assert torch.all(w_high_base <= w * (1 + 1e-6))


def test_return_weights_reject_a_bad_baseline():
    rewards, mask = torch.zeros(2, 3), torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(ValueError, match="baseline"):
        return_weights(rewards, mask, torch.zeros(3), 0.99, 1.0, 10.0)
    with pytest.raises(ValueError, match="baseline"):
        return_weights(rewards, mask, torch.tensor([0.0, float("nan")]), 0.99, 1.0, 10.0)


def test_rwr_loss_is_the_return_weighted_token_nll():
    episodes = [ep(1, "15<eos>"), ep(1, "16<eos>"), ep(0, "7<eos>")]
    batch = make_token_batch(episodes)
    cfg = TokenILQLConfig()
    torch.manual_seed(0)
    policy = TokenPolicy()
    baseline = torch.tensor([0.3, 0.3, 0.1])
    logp = torch.log_softmax(policy(batch.tokens, batch.state_index), -1).gather(-1, batch.actions[..., None])[..., 0]
    g = returns_to_go(batch.rewards, batch.mask, cfg.gamma)
    w = torch.clamp(torch.exp(cfg.awr_beta * (g - baseline[:, None])), max=cfg.max_weight)
    expected = -(w * logp)[batch.mask].sum() / batch.mask.sum()
    assert rwr_loss(policy, batch, baseline, cfg).item() == pytest.approx(expected.item(), rel=1e-5)


def test_train_token_rwr_is_deterministic_and_prefers_the_rewarded_answer():
    episodes = [ep(1, "15<eos>")] * 3 + [ep(1, "16<eos>")] * 5
    runs = []
    for _ in range(2):
        seed_everything(0)
        runs.append(train_token_rwr(episodes, 30, np.random.default_rng(0)))
    assert runs[0][1] == runs[1][1]
    policy = runs[0][0]
    decoded = greedy_decode(lambda t, i: policy(t, i), [1])
    assert token_text(decoded[0]) == "15<eos>"  # plain BC would copy the majority "16"
    with pytest.raises(ValueError, match="bc_epochs"):
        train_token_rwr(episodes, 0, np.random.default_rng(0))


def test_value_learning_beats_imitation_on_the_noisy_log():
    """BC repeats the annotator's common slip; the ILQL-like shift picks out the
    rarer exact answers (the lab's full profile and seed: a few seconds)."""
    result = language_offline_experiment(seed=71, episodes_per_prompt=45, bc_epochs=12, iql_epochs=20)
    bc = result["evaluation"]["behavior_cloning"]["exact_match"]
    ilql = result["evaluation"]["ilql_like"]["exact_match"]
    assert ilql > bc
    assert ilql >= 0.75
