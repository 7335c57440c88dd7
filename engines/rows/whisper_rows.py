"""openai-whisper: model.sinusoids, the audio encoder's positional table ([sin | cos], w_i = 10000^(-i/(d/2 - 1)))."""
from engines.row import Row
from engines.rows._torch_layout import torch_dtype


def sinusoids():
    from whisper.model import sinusoids as table_of

    def fn(positions, config):
        table = table_of(int(positions.max()) + 1, config["dim"], max_timescale=config["base"])
        return table[positions].to(torch_dtype(config["dtype"]))

    return fn


ROWS = [Row("openai-whisper", "whisper.model.sinusoids", "sinusoidal", "audio", dtype, sinusoids,
            {"layout": "concatenated", "downscale_freq_shift": 1, "flip_sin_to_cos": False, "scale": 1.0,
             "scenarios": ("prefill", "chunked"), "max_position": 1 << 14})
        for dtype in ("float32", "bfloat16")]
