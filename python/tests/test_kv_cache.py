"""check_rope_cache (issue 51, item 2): a fused RoPE + paged-cache append checked from the cache before and after.
The kernels are written here from the engines' published definitions, not from pe-suite's code: the rotation is
HF's rotate_half (GPT-NeoX) or GPT-J's interleaved pairs in float32, inv_freq = 1 / base ** (arange(0, d, 2) / d);
the append is vLLM's reshape_and_cache_flash (block_idx = slot // block_size, block_offset = slot % block_size;
key_cache[block_idx, block_offset] = key for NHD, as FlashInfer's key_cache[block_idx, :, block_offset] for HND; slot
-1 skipped; the token count is slot_mapping's) and concat_and_cache_mla (kv_cache[block_idx, block_offset] =
cat(kv_c, k_pe))."""
import numpy as np
import pytest
import torch

import pe_suite

TOKENS, HEADS, DIM, BLOCKS, BLOCK = 10, 2, 64, 4, 8


def rotate(k, positions, interleaved=False, base=10000.0):
    """k [T, H, D] float32 rotated at positions, in float32 (HF's rotate_half, or GPT-J's pairs)."""
    d = k.shape[-1]
    inv_freq = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float32) / np.float32(d))).astype(np.float32)
    ang = (np.asarray(positions, dtype=np.float32)[:, None] * inv_freq[None, :]).astype(np.float32)
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    if interleaved:
        a, b = k[..., 0::2], k[..., 1::2]
        out = np.empty_like(k)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, b * cos + a * sin
        return out
    a, b = k[..., : d // 2], k[..., d // 2 :]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1).astype(np.float32)


def append(cache, keys, slots, layout="NHD", shift=0):
    """vLLM's reshape_and_cache_flash; `shift` plants a write `shift` slots past slot_mapping's."""
    out = cache.copy()
    for t, slot in enumerate(slots):
        if slot < 0:
            continue
        block, offset = divmod(slot + shift, cache.shape[1] if layout == "NHD" else cache.shape[2])
        if layout == "NHD":
            out[block, offset] = keys[t]
        else:
            out[block, :, offset] = keys[t]
    return out


@pytest.fixture
def case():
    rng = np.random.default_rng(51)
    k = rng.standard_normal((TOKENS, HEADS, DIM)).astype(np.float32)
    positions = np.arange(1000, 1000 + TOKENS)
    slots = rng.permutation(BLOCKS * BLOCK)[:TOKENS]
    slots[3] = -1  # a padded token: nothing written
    return k, positions, slots


@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_a_fused_rope_append_passes(case, layout):
    k, positions, slots = case
    shape = (BLOCKS, BLOCK, HEADS, DIM) if layout == "NHD" else (BLOCKS, HEADS, BLOCK, DIM)
    before = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    after = append(before, rotate(k, positions), slots, layout)
    r = pe_suite.check_rope_cache(k, positions, before, after, slots, cache_layout=layout)
    assert r.passed, str(r)
    assert "9 of 10 tokens written" in str(r) and "every element keeps its bits" in str(r)


def test_a_write_to_the_neighbouring_slot_fails_named(case):
    k, positions, slots = case
    before = np.zeros((BLOCKS, BLOCK, HEADS, DIM), dtype=np.float32)
    slots = np.array([2 * s for s in range(TOKENS)])  # room for the planted neighbour
    after = append(before, rotate(k, positions), slots, shift=1)
    r = pe_suite.check_rope_cache(k, positions, before, after, slots)
    assert not r.passed
    assert r.moved and r.moved[0]["slot"] == 1
    assert "token 0's rotated key written at slot 1, not at its slot 0 (slot_mapping): off by 1" in r.diagnosis


def test_the_rotation_is_checked_with_its_diagnosis(case):
    k, positions, slots = case
    before = np.zeros((BLOCKS, BLOCK, HEADS, DIM), dtype=np.float32)
    after = append(before, rotate(k, positions, base=500000.0), slots)
    r = pe_suite.check_rope_cache(k, positions, before, after, slots)
    assert not r.passed and not r.moved
    assert any("base 500000" in d for d in r.rotation.diagnosis), str(r)


def test_bfloat16_tensors(case):
    k, positions, slots = case
    kb = torch.from_numpy(k).to(torch.bfloat16)
    rotated = torch.from_numpy(rotate(kb.float().numpy(), positions)).to(torch.bfloat16)
    before = torch.zeros((BLOCKS, BLOCK, HEADS, DIM), dtype=torch.bfloat16)
    after = before.clone()
    for t, slot in enumerate(slots):
        if slot >= 0:
            after[slot // BLOCK, slot % BLOCK] = rotated[t]
    assert pe_suite.check_rope_cache(kb, torch.from_numpy(positions), before, after, torch.from_numpy(slots)).passed
    free = next(s for s in range(BLOCKS * BLOCK) if s not in slots)
    after[free // BLOCK, free % BLOCK, 1, 5] += 1  # an unwritten slot changed
    r = pe_suite.check_rope_cache(kb, torch.from_numpy(positions), before, after, torch.from_numpy(slots))
    assert not r.passed and r.moved[0]["slot"] == free and r.moved[0]["channel"] == 5, str(r)


def test_mla_ckv_and_the_rotated_k_pe(case):
    _, positions, slots = case
    rng = np.random.default_rng(2)
    kv_lora, rope = 32, 16
    kv_c = rng.standard_normal((TOKENS, kv_lora)).astype(np.float32)
    k_pe = rng.standard_normal((TOKENS, rope)).astype(np.float32)
    before = np.zeros((BLOCKS, BLOCK, kv_lora + rope), dtype=np.float32)
    rotated = rotate(k_pe[:, None, :], positions, interleaved=True)[:, 0]
    after = before.copy()
    for t, slot in enumerate(slots):
        if slot >= 0:
            after[slot // BLOCK, slot % BLOCK] = np.concatenate([kv_c[t], rotated[t]])
    r = pe_suite.check_rope_cache(k_pe, positions, before, after, slots, ckv=kv_c, layout="interleaved")
    assert r.passed, str(r)
    r = pe_suite.check_rope_cache(k_pe, positions, before, after, slots, layout="interleaved")
    assert r.passed and "ckv: not given" in str(r)  # said, not silently passed
    bad = kv_c.copy()
    bad[5, 7] += 1
    r = pe_suite.check_rope_cache(k_pe, positions, before, after, slots, ckv=bad, layout="interleaved")
    assert not r.passed and r.ckv == [{"token": 5, "channel": 7}], str(r)


def test_bad_arguments_are_named(case):
    k, positions, slots = case
    before = np.zeros((BLOCKS, BLOCK, HEADS, DIM), dtype=np.float32)
    with pytest.raises(ValueError, match="slot_mapping: slot"):
        pe_suite.check_rope_cache(k, positions, before, before, np.array([1] * TOKENS))
    with pytest.raises(ValueError, match="slot_mapping: token 0's slot 99"):
        pe_suite.check_rope_cache(k, positions, before, before, np.array([99] + list(range(1, TOKENS))))
    with pytest.raises(ValueError, match="cache_layout"):
        pe_suite.check_rope_cache(k, positions, before, before, slots, cache_layout="NDH")
    with pytest.raises(ValueError, match="cache_after"):
        pe_suite.check_rope_cache(k, positions, before, before[:1], slots)
    with pytest.raises(TypeError, match="did you mean 'base'"):
        pe_suite.check_rope_cache(k, positions, before, before, slots, bse=1.0)


def test_vllm_padding_mixed_types_and_flattened_heads(case):
    """vLLM V1 pads x (and positions) past slot_mapping's count for CUDA graphs, flattens heads, and may keep a
    bf16 cache for float32 keys; check_rope reads y's type for the budget."""
    k, positions, slots = case
    rotated = torch.from_numpy(rotate(k, positions)).to(torch.bfloat16)
    before = torch.zeros((BLOCKS, BLOCK, HEADS, DIM), dtype=torch.bfloat16)
    after = before.clone()
    for t, slot in enumerate(slots):
        if slot >= 0:
            after[slot // BLOCK, slot % BLOCK] = rotated[t]
    padded_k = np.concatenate([k, np.ones((6, HEADS, DIM), np.float32)]).reshape(TOKENS + 6, HEADS * DIM)
    padded_p = np.concatenate([positions, np.zeros(6, np.int64)])
    r = pe_suite.check_rope_cache(padded_k, padded_p, before, after, torch.from_numpy(slots))
    assert r.passed, str(r)


def test_nothing_written_and_a_padded_token_written_anyway(case):
    k, positions, slots = case
    before = np.zeros((BLOCKS, BLOCK, HEADS, DIM), dtype=np.float32)
    none = np.full(TOKENS, -1)
    r = pe_suite.check_rope_cache(k, positions, before, before.copy(), none)
    assert r.passed and r.rotation is None and "0 of 10 tokens written" in str(r)
    free = next(s for s in range(BLOCKS * BLOCK) if s not in slots)
    after = append(before, rotate(k, positions), slots)
    after[free // BLOCK, free % BLOCK] = rotate(k, positions)[3]  # token 3 is padded (slot -1) in this case
    r = pe_suite.check_rope_cache(k, positions, before, after, slots)
    assert not r.passed
    assert f"token 3's rotated key written at slot {free}, not at slot_mapping -1: a padded token" in r.diagnosis


def test_a_write_one_block_over_in_hnd_is_named():
    rng = np.random.default_rng(3)
    k = rng.standard_normal((BLOCK, HEADS, DIM)).astype(np.float32)
    positions = np.arange(BLOCK)
    slots = np.arange(BLOCK)  # the first block
    before = np.zeros((BLOCKS, HEADS, BLOCK, DIM), dtype=np.float32)
    after = append(before, rotate(k, positions), slots, layout="HND", shift=BLOCK)
    r = pe_suite.check_rope_cache(k, positions, before, after, slots, cache_layout="HND")
    assert not r.passed and r.moved[0]["block"] == 1 and r.moved[0]["offset"] == 0
    assert f"token 0's rotated key written at slot {BLOCK}, not at its slot 0 (slot_mapping): off by {BLOCK}" in r.diagnosis


def test_keywords_that_do_not_apply_are_refused(case):
    k, positions, slots = case
    before = np.zeros((BLOCKS, BLOCK, HEADS, DIM), dtype=np.float32)
    for bad in ({"heads_first": True}, {"against": before}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            pe_suite.check_rope_cache(k, positions, before, before, slots, **bad)
    with pytest.raises(ValueError, match="ckv: MLA"):
        pe_suite.check_rope_cache(k, positions, before, before, slots, ckv=np.zeros((TOKENS, 4), np.float32))
    with pytest.raises(ValueError, match="cache_layout"):
        pe_suite.check_rope_cache(k[:, 0], positions, before[..., 0, :], before[..., 0, :], slots, cache_layout="HND")
    with pytest.raises(ValueError, match="positions: 3 per axis"):
        pe_suite.check_rope_cache(k, positions[:3], before, before, slots)
    with pytest.raises(ValueError, match="x: expected"):
        pe_suite.check_rope_cache(k[..., :32], positions, before, before, slots)


@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_a_large_cache_is_read_a_run_of_blocks_at_a_time(layout):
    """A 32 MiB cache (many of the check's runs): the moved element in the last run is named by its own slot,
    block and offset, the moved count spans runs, and the check's numpy allocations stay under a quarter of the
    cache (HND's slots were a copy of each whole cache, and the comparison a boolean of every element: 8 MiB)."""
    import tracemalloc
    blocks, block, heads, dim = 1024, 16, 8, 64
    rng = np.random.default_rng(4)
    k = rng.standard_normal((TOKENS, heads, dim)).astype(np.float32)
    positions = np.arange(TOKENS)
    slots = np.arange(TOKENS) * 37
    shape = (blocks, block, heads, dim) if layout == "NHD" else (blocks, heads, block, dim)
    before = rng.standard_normal(shape).astype(np.float32)
    after = append(before, rotate(k, positions), slots, layout)
    last, first = (blocks - 2) * block + 5, 3 * block + 1  # a slot in the last run, one in the first
    for slot, head, channel in ((last, 6, 40), (first, 2, 7)):
        b, o = divmod(slot, block)
        at = (b, o, head, channel) if layout == "NHD" else (b, head, o, channel)
        after[at] += 1.0
    tracemalloc.start()
    try:
        r = pe_suite.check_rope_cache(k, positions, before, after, slots, cache_layout=layout)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not r.passed and r.rotation.passed, str(r)
    assert [(m["slot"], m["block"], m["offset"], m["head"], m["channel"], m["elements"]) for m in r.moved] == [
        (first, 3, 1, 2, 7, 1), (last, blocks - 2, 5, 6, 40, 1)]
    assert "2 element(s) in 2 slot(s) changed" in str(r)
    assert peak < before.nbytes / 4, peak


def test_a_cache_of_no_elements_and_no_writes():
    """A cache whose heads hold no channels, nothing written: nothing moved, nothing to divide by."""
    before = np.zeros((2, 4, 0, 8), dtype=np.float32)
    r = pe_suite.check_rope_cache(np.zeros((0, 0, 8), np.float32), np.zeros(0, np.int64), before, before.copy(),
                                  np.zeros(0, np.int64))
    assert r.passed and not r.moved, str(r)
