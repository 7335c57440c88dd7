"""openai-whisper: model.sinusoids, the audio encoder's positional table ([sin | cos], w_i = 10000^(-i/(d/2 - 1)))."""
from engines.row import Row
from engines.rows._adapters import WHISPER, whisper_table


def sinusoids():
    from whisper.model import sinusoids as table_of
    return whisper_table(table_of)


ROWS = [Row("openai-whisper", "whisper.model.sinusoids", "sinusoidal", "audio", dtype, sinusoids, WHISPER)
        for dtype in ("float32", "bfloat16")]
