"""A fused RoPE + append into a paged KV cache, checked from the cache before and after the kernel (issue 51):
vLLM's rotary op then `reshape_and_cache_flash` (its flash backends' NHD cache) and `concat_and_cache_mla` (MLA's
compressed kv beside the rotated k_pe), FlashInfer's `append_paged_kv_cache` after `apply_rope` (NHD or HND),
flash-attention's `flash_attn_with_kvcache(k=..., rotary_cos=...)`. The slots `slot_mapping` names must hold the
keys rotated at their positions (check_rope's verdict on them: its budget, its diagnosis); every other element of
the cache must be bit-identical to before (a write to a neighbouring slot or block, a padded token's slot -1
written anyway); MLA's compressed part must be the given ckv, bit for bit.

Cache layouts: "NHD" [blocks, block_size, heads, head_dim], "HND" [blocks, heads, block_size, head_dim], and MLA's
[blocks, block_size, kv_lora_rank + rope dim] (3-D, no heads axis), where x is k_pe [tokens, rope dim] and ckv
[tokens, kv_lora_rank]. vLLM's older `reshape_and_cache` layout ([blocks, heads, head_dim/x, block_size, x]) and
fp8 caches with a scale are not read. Tensors may be numpy arrays or torch tensors (brought to the host, whole:
a cache of several GB is copied)."""
import numpy as np

from . import _native
from ._keywords import checked
from ._verdict import Verdict, closing

_check_rope = checked(_native.check_rope)
LAYOUTS = ("NHD", "HND")
_REFUSED = ("against", "heads_first")  # check_rope's keywords that do not apply to slots gathered from a cache


class CacheReport(Verdict):
    """check_rope_cache's verdict: `.passed`; the written slots' RoPE check (`.rotation`, a Report, None when no
    token writes); the slots outside them that changed (`.moved`, the first 8: slot, block, offset, elements
    changed, the first one's head, channel, before and after values); MLA's ckv elements that differ (`.ckv`: token,
    channel); what the changed slots hold (`.diagnosis`: "token 0's rotated key written at slot 1, ..."); the text."""

    def __init__(self, rotation, moved, ckv, diagnosis, text):
        self.rotation, self.moved, self.ckv, self.diagnosis, self.text = rotation, moved, ckv, diagnosis, text
        self.passed = (rotation is None or rotation.passed) and not moved and not ckv


def _torch_like(a):
    return hasattr(a, "detach")


def _host(a, name):
    """A torch tensor on the host (detached), or a numpy array; TypeError naming `name` otherwise."""
    if _torch_like(a):
        return a.detach().cpu()
    if isinstance(a, (list, tuple)):
        return np.asarray(a)
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array or a torch tensor, got {type(a).__name__}")
    return a


def _dtype_name(a):
    return str(a.dtype).replace("torch.", "")


def _bits(a):
    """The elements' bits as unsigned integers of their width (a bf16 tensor's 16 bits)."""
    if _torch_like(a):
        import torch
        width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        return a.contiguous().view(width).numpy()
    return np.ascontiguousarray(a).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def _value(a, index, dtype):
    """One element as a Python float (a bf16 tensor's or bits array's value, not its bits)."""
    v = a[index]
    if _torch_like(a):
        return float(v)
    if str(dtype) in ("bfloat16", "bf16") and a.dtype == np.uint16:
        return float(np.array([int(v) << 16], dtype=np.uint32).view(np.float32)[0])
    return v.item()


def _take(a, index):
    """a[index] for an integer index array, numpy or torch."""
    if _torch_like(a):
        import torch
        return a[torch.as_tensor(np.asarray(index, dtype=np.int64))]
    return a[np.asarray(index, dtype=np.int64)]


class _Slots:
    """The cache as [slots, heads, width] without a copy of it: rows gathered by slot, and runs of whole blocks
    (HND's a copy of the run alone, its heads and offsets swapped)."""

    def __init__(self, cache, layout):
        self.cache, self.layout = cache, layout
        if cache.ndim == 3:  # MLA: one "head"
            self.block_size, self.heads, self.width = cache.shape[1], 1, cache.shape[2]
        elif layout == "HND":
            self.block_size, self.heads, self.width = cache.shape[2], cache.shape[1], cache.shape[3]
        else:
            self.block_size, self.heads, self.width = cache.shape[1], cache.shape[2], cache.shape[3]
        self.n = cache.shape[0] * self.block_size
        self.dtype = cache.dtype

    def rows(self, slots):
        """[len(slots), heads, width]: the given slots' rows (a copy of them alone)."""
        slots = np.asarray(slots, dtype=np.int64)
        b, o = slots // self.block_size, slots % self.block_size
        if _torch_like(self.cache):
            import torch
            b, o = torch.as_tensor(b), torch.as_tensor(o)
        if self.cache.ndim == 3:
            return self.cache[b, o][:, None, :]
        return self.cache[b, :, o] if self.layout == "HND" else self.cache[b, o]

    def run(self, first_block, blocks):
        """Slots of blocks [first_block, first_block + blocks) as [slots, heads, width]."""
        c = self.cache[first_block:first_block + blocks]
        if self.layout == "HND":
            c = c.permute(0, 2, 1, 3) if _torch_like(c) else c.transpose(0, 2, 1, 3)
        return c.reshape(c.shape[0] * self.block_size, self.heads, self.width)


def _layout_of(cache, cache_layout):
    if cache.ndim == 3:
        if cache_layout is not None:
            raise ValueError(f"cache_layout: {cache_layout!r} given for a 3-D cache, which is MLA's [blocks, "
                             f"block_size, kv_lora_rank + rope dim]")
        return "MLA"
    if cache.ndim != 4:
        raise ValueError(f"cache_before: expected [blocks, block_size, heads, head_dim] (NHD), [blocks, heads, "
                         f"block_size, head_dim] (HND) or MLA's [blocks, block_size, width]; got shape "
                         f"{tuple(cache.shape)}")
    layout = cache_layout or "NHD"
    if layout not in LAYOUTS:
        raise ValueError(f"cache_layout: expected one of {', '.join(LAYOUTS)}; got {cache_layout!r}")
    return layout


def _written(slots, n_slots):
    """The tokens that write (slot >= 0), checked: each slot in the cache, none written twice."""
    if slots.ndim != 1 or not np.issubdtype(slots.dtype, np.integer):
        raise ValueError(f"slot_mapping: expected one integer per token, got shape {slots.shape} {slots.dtype}")
    if (slots < -1).any():
        raise ValueError(f"slot_mapping: {slots[slots < -1][0]} (a slot is >= 0, or -1 for a padded token)")
    tokens = np.nonzero(slots >= 0)[0]
    bad = tokens[slots[tokens] >= n_slots]
    if bad.size:
        raise ValueError(f"slot_mapping: token {bad[0]}'s slot {slots[bad[0]]} lies past the cache's {n_slots} slots")
    seen, counts = np.unique(slots[tokens], return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"slot_mapping: slot {seen[counts > 1][0]} is written by more than one token")
    return tokens


def _keys(x, tokens, heads, width):
    """x as [tokens, heads, width]: vLLM's [tokens, heads·head_dim] and a one-head [tokens, head_dim] reshaped;
    rows past slot_mapping's count dropped (vLLM pads x for CUDA graphs; its kernels read slot_mapping's count)."""
    if x.ndim == 2 and x.shape[-1] == heads * width:
        x = x.reshape(x.shape[0], heads, width)
    if x.ndim != 3 or x.shape[1] != heads or x.shape[2] != width:
        raise ValueError(f"x: expected [tokens, {heads}, {width}] (the cache's heads and rotated channels), got shape "
                         f"{tuple(x.shape)}")
    if x.shape[0] < tokens:
        raise ValueError(f"slot_mapping: {tokens} tokens, but x holds {x.shape[0]}")
    return x[:tokens]


def _positions(positions, tokens):
    p = positions.cpu().numpy() if _torch_like(positions) else np.asarray(positions)
    if p.shape[-1] < tokens:
        raise ValueError(f"positions: {p.shape[-1]} per axis, slot_mapping has {tokens} tokens")
    return p[..., :tokens]


# Elements of the caches compared at a time: a run of whole blocks, so that what the comparison holds does not grow
# with the cache.
_RUN_ELEMENTS = 1 << 18


def _moved(before, after, written, dtype, limit=8):
    """Slots outside the written ones with changed bits: (elements, slots, the first `limit` slots as dicts), the
    caches compared a run of blocks at a time."""
    is_written = np.zeros(before.n, dtype=bool)
    is_written[written] = True
    per_block = max(1, before.block_size * before.heads * before.width)  # a cache of no elements: one run
    step = max(1, _RUN_ELEMENTS // per_block)
    count, n_moved, out = 0, 0, []
    for b0 in range(0, before.n // before.block_size, step):
        first = b0 * before.block_size
        old, new = before.run(b0, step), after.run(b0, step)
        changed = _bits(old) != _bits(new)
        changed[is_written[first:first + changed.shape[0]]] = False
        per_slot = changed.sum(axis=(1, 2))
        moved = np.nonzero(per_slot)[0]
        count, n_moved = count + int(per_slot.sum()), n_moved + len(moved)
        for s in moved[:max(0, limit - len(out))]:
            h, c = (int(v) for v in np.argwhere(changed[s])[0])
            slot = first + int(s)
            out.append({"slot": slot, "block": slot // before.block_size, "offset": slot % before.block_size,
                        "elements": int(per_slot[s]), "head": h, "channel": c,
                        "before": _value(old, (int(s), h, c), dtype), "after": _value(new, (int(s), h, c), dtype)})
        del old, new, changed  # before the next run's copies are made
    return count, n_moved, out


def _norms(a):
    return np.sqrt((np.asarray(a.float() if _torch_like(a) else a, dtype=np.float64) ** 2).sum(axis=-1))


def _fits_moved(slot, slots, x, x_norms, positions, after, rope_part, keywords):
    """The token (a padded one too) whose key, rotated, the moved slot holds: candidates by their heads' norms
    (x_norms, [tokens, heads]: a rotation keeps them), then check_rope on the best four; None when none passes."""
    held_row = after.rows([slot])[:, :, rope_part]
    held = _norms(held_row[0])
    if not np.isfinite(held).all() or held.sum() == 0 or x.shape[0] == 0:
        return None
    gap = np.abs(x_norms - held[None, :]).max(axis=1) / held.max()
    for t in np.argsort(gap, kind="stable")[:4]:
        if gap[t] > 0.05:
            break
        r = _check_rope(x[int(t):int(t) + 1], held_row, positions[..., t:t + 1], **keywords)
        if r.passed:
            return int(t)
    return None


def _ckv_check(ckv, after, slots, tokens, nope, mla, lines):
    if ckv is None:
        if mla:
            lines.append("ckv: not given: the compressed part of the written slots is not checked")
        return []
    if not mla:
        raise ValueError("ckv: MLA's compressed kv applies to a 3-D (MLA) cache only")
    c = _host(ckv, "ckv")
    if tuple(c.shape[:1]) != (len(slots),) and c.shape[0] >= len(slots):
        c = c[:len(slots)]  # vLLM pads kv_c with k_pe
    if tuple(c.shape) != (len(slots), nope) or _dtype_name(c) != _dtype_name(after):
        raise ValueError(f"ckv: expected [tokens, kv_lora_rank] = ({len(slots)}, {nope}) of the cache's "
                         f"{after.dtype}; got {tuple(c.shape)} {c.dtype}")
    written = _bits(after.rows(slots[tokens])[:, 0, :nope])
    diff = np.argwhere(written != _bits(_take(c, tokens)))
    lines.append(f"ckv: {len(diff)} element(s) of the compressed part differ from the given ckv" if len(diff) else
                 "ckv: the compressed part is the given ckv, bit for bit")
    return [{"token": int(tokens[t]), "channel": int(ch)} for t, ch in diff[:8]]


def check_rope_cache(x, positions, cache_before, cache_after, slot_mapping, *, cache_layout=None, ckv=None,
                     **rope_keywords):
    """Check a fused RoPE + paged-cache append (module docstring). x: the keys before rotation, [tokens, heads,
    head_dim] (or vLLM's [tokens, heads·head_dim]; MLA: k_pe [tokens, rope dim]); positions: one per token;
    cache_before / cache_after: the cache around the kernel's call; slot_mapping: each token's slot,
    block·block_size + offset (-1: a padded token, nothing written; tokens past its length, vLLM's CUDA-graph
    padding, are dropped); cache_layout: "NHD" (the default) or "HND" (MLA's 3-D cache has none); ckv: MLA's
    compressed kv [tokens, kv_lora_rank] at the front of each written slot. Every other keyword is check_rope's
    (base, layout, scaling, hf_config, contract, dtype, ...), but against and heads_first. Returns a CacheReport;
    the caller's arrays are not written."""
    for k in _REFUSED:
        if k in rope_keywords:
            raise ValueError(f"{k}: not with check_rope_cache (the keys are gathered from the cache's slots)")
    before, after = _host(cache_before, "cache_before"), _host(cache_after, "cache_after")
    if tuple(before.shape) != tuple(after.shape) or _dtype_name(before) != _dtype_name(after):
        raise ValueError(f"cache_after: shape {tuple(after.shape)} {after.dtype} differs from cache_before's "
                         f"{tuple(before.shape)} {before.dtype}")
    layout = _layout_of(before, cache_layout)
    slots = np.asarray(_host(slot_mapping, "slot_mapping"))
    before_s, after_s = _Slots(before, layout), _Slots(after, layout)
    block_size = before_s.block_size
    written = _written(slots, before_s.n)
    mla = layout == "MLA"
    x = _host(x, "x")
    rope_width = x.shape[-1] if mla else before_s.width
    x = _keys(x.reshape(x.shape[0], 1, x.shape[-1]) if mla and x.ndim == 2 else x, len(slots), before_s.heads,
              rope_width)
    positions = _positions(positions, len(slots))
    nope = before_s.width - rope_width
    if nope < 0:
        raise ValueError(f"x: its {rope_width} channels exceed the cache's {before_s.width}")
    rope_part = slice(nope, before_s.width)
    dtype = rope_keywords.get("dtype")
    lines = [f"paged cache: {before_s.n} slots ({before_s.n // block_size} blocks x {block_size}), "
             f"{'MLA (ckv ' + str(nope) + ' + rope ' + str(rope_width) + ')' if mla else layout}, "
             f"{len(written)} of {len(slots)} tokens written"]
    rotation = None
    if len(written):
        rotation = _check_rope(_take(x, written), after_s.rows(slots[written])[:, :, rope_part],
                               positions[..., written], **rope_keywords)
        lines.append("written slots (the rotated keys):")
        lines += ["  " + line for line in str(rotation).rstrip().splitlines()]
    ckv_bad = _ckv_check(ckv, after_s, slots, written, nope, mla, lines)
    count, n_moved, moved = _moved(before_s, after_s, slots[written], dtype)
    diagnosis = []
    if count:
        lines.append(f"outside the written slots: {count} element(s) in {n_moved} slot(s) changed (they must keep "
                     f"their bits); first:")
        lines += [f"  slot {m['slot']} (block {m['block']}, offset {m['offset']}): {m['elements']} element(s), "
                  f"first head {m['head']} channel {m['channel']}: {m['before']!r} -> {m['after']!r}" for m in moved]
        x_norms = _norms(x)  # once for every moved slot
        for slot in [m["slot"] for m in moved[:4]]:
            t = _fits_moved(slot, slots, x, x_norms, positions, after_s, rope_part, rope_keywords)
            if t is not None:
                own = "slot_mapping -1: a padded token" if slots[t] < 0 else f"its slot {int(slots[t])} (slot_mapping)"
                off = "" if slots[t] < 0 else f": off by {slot - int(slots[t])}"
                diagnosis.append(f"token {t}'s rotated key written at slot {slot}, not at {own}{off}")
        lines += [f"the data fits: {d}" for d in diagnosis] or ["undetermined: no token's rotated key fits the "
                                                                "changed slots"]
    else:
        lines.append("outside the written slots: every element keeps its bits")
    report = CacheReport(rotation, moved, ckv_bad, diagnosis, "")
    report.text = closing(lines, not report.passed)  # the moved slots' fits are said above
    return report
