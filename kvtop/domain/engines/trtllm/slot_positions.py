"""The buffers a TensorRT engine's C++ runtime sizes by slot × sequence position, beside its logits buffers (§29).

What. `TrtGptModelInflightBatching` logs `Allocated … GPU memory for runtime buffers` around `createBuffers` and
`… for decoder` around `createDecoder` (batch_manager/trtGptModelInflightBatching.cpp, stored 2024 copy, search-index
id 37146555805). Besides the [max_batch_size × beam, vocab] logits buffers that §18 charges, three int32 buffers there
grow with max_seq_len rather than with the vocabulary:
- `DecoderBuffers`' cache indirection in and out, 2 × [max_num_sequences, beam, max_attention_window] int32
  (batch_manager/decoderBuffers.cpp, ids 3621611751 and 5833106882);
- one `SlotDecoderBuffers` per slot, whose output ids are [beam, max_seq_len] int32 on the GPU (createBuffers);
- `GptDecoderBatched::setup`'s joint output ids, [max_batch_size, beam, max_seq_len] int32 (runtime/
  gptDecoderBatched.cpp, ids 5632585385, 5874852104, 2618173221; older copies add parent ids of the same shape,
  left in the error).
16 B per slot, beam and position where the attention window is max_seq_len (kvtop takes it so: no window flag is
read for an engine). shaamil-etched's 0.16.0 start (2,048 slots, max_seq_len 25,000, vocab 128,256) prints 1.63 GiB
of runtime buffers and 3.30 GiB of decoder: 4.93 GiB where the 0.15+ form's four logits buffers are 3.91; these
buffers add 0.76 (4.67), the rest (log-probs and the sampling layers' scratch) stays in the error.

Which releases: the 0.15+ form (`eras.ENGINE_RUNTIME_ERAS` "executor"), whose four logits buffers were read without
them; the 2024 form's seven buffers were read off logs that hold them already (28.6 and 29.1 B per slot and
vocabulary entry, §18), so it is left as read. Read in 2024 trees; assumed to hold in later releases of the C++
runtime (not read per release): the 2025 copy of decoderBuffers.cpp (id 5833106882) keeps the cache indirection and
adds log-probs [max_num_sequences, beam, max_seq_len] float on the GPU, 4 B more a position, left in the error (the
release it entered is not read).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs

INT32_BYTES = 4
# cache indirection in and out (window positions), the slot's output ids and the decoder's joint output ids
# (sequence positions): four int32 per slot, beam and position
INT32_PER_POSITION = 4


def slot_position_bytes(inputs: CalibrationInputs, slots: int) -> int:
    """The bytes of the per-position buffers for `slots` sequences of the launch's max_seq_len (its context length)
    at its beam width."""
    beam = inputs.settings.max_beam_width or 1
    return slots * beam * max(inputs.context_length, 0) * INT32_PER_POSITION * INT32_BYTES
