"""torch_trt's own lowering passes, one small family per file."""
