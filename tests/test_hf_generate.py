"""``QritaLogitsWarper`` inside Hugging Face ``generate()``, with tiny models built from a config.

No hub download: the models are randomly initialised from a config here.  With
the same torch seed, ``generate`` with qrita's warper draws exactly the tokens
it draws with Hugging Face's own ``TopKLogitsWarper`` + ``TopPLogitsWarper``
(both feed the same probabilities to the same multinomial draw), which shows
the masks agree step by step.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from qrita.integrations.transformers import QritaLogitsWarper  # noqa: E402

VOCAB = 1000


def tiny_model(kind: str):
    torch.manual_seed(0)
    if kind == "gpt2":
        config = transformers.GPT2Config(
            vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=None, eos_token_id=None
        )
        model = transformers.GPT2LMHeadModel(config)
        scale = 10.0  # the output embeddings are the input embeddings here
    else:
        config = transformers.LlamaConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=64,
            bos_token_id=None,
            eos_token_id=None,
        )
        model = transformers.LlamaForCausalLM(config)
        scale = 30.0
    # sharper logits than a fresh init gives, so that top-k and top-p both cut
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(scale)
    return model.eval()


def generate(model, seed: int, processors=None, **kwargs):
    torch.manual_seed(seed)
    input_ids = torch.randint(1, VOCAB, (3, 5), generator=torch.Generator().manual_seed(seed))
    out = model.generate(
        input_ids,
        attention_mask=torch.ones_like(input_ids),
        do_sample=True,
        max_new_tokens=8,
        pad_token_id=0,
        logits_processor=transformers.LogitsProcessorList(processors or []),
        output_scores=True,
        return_dict_in_generate=True,
        **kwargs,
    )
    return out.sequences, out.scores


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
@pytest.mark.parametrize("top_k, top_p", [(20, 0.9), (0, 0.8), (5, 1.0)])
def test_generate_runs_and_matches_hf_warpers(kind, top_k, top_p):
    model = tiny_model(kind)
    for seed in range(2):
        ours, scores = generate(model, seed, [QritaLogitsWarper(top_k=top_k, top_p=top_p)], top_k=0, top_p=1.0)
        assert ours.shape == (3, 13) and int(ours.max()) < VOCAB
        # every drawn token was kept by the warper
        for step, s in enumerate(scores):
            token = ours[:, 5 + step]
            assert torch.isfinite(s.gather(1, token[:, None])).all()
            kept = torch.isfinite(s).sum(dim=1)
            assert (kept >= 1).all() and (kept < VOCAB).all()
            if top_k:
                assert (kept <= top_k).all()
        theirs, _ = generate(model, seed, top_k=top_k, top_p=top_p)
        assert torch.equal(ours, theirs)
