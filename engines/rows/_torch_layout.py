"""The driver's x [tokens, heads, head_dim] as the [batch, heads, tokens, head_dim] most engines take, and back."""


def to_bhsd(x):
    return x.transpose(0, 1)[None]


def from_bhsd(y):
    return y[0].transpose(0, 1).contiguous()


def torch_dtype(name):
    import torch
    return getattr(torch, name)
