"""A training-mode GraphNet sample against float64: eager float32's and
DISC float32's input gradients (the harness's training step) each compared
with eager float64's, relative to each gradient's magnitude. Tells a
sample whose float32 gradients are ill-conditioned (eager is as far off as
DISC) from a DISC bug (DISC much further off than eager).

    .venv/bin/python bench/train_precision.py ../shared/graphnet/samples/mmseg/Fast-SCNN
"""
import torch, disc, sys, time
from disc.bench.graphnet import load_sample
from disc.bench.harness import training_step, trainable_inputs
s = load_sample(sys.argv[1])
tr = trainable_inputs(s.arg_names)
m = s.module
x = s.inputs
e32 = training_step(m, tr)(*x)
m64 = m.double()
x64 = [t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in x]
e64 = training_step(m64, tr)(*x64)
m.float()
t = time.time()
c = training_step(torch.compile(m, backend="disc", dynamic=True), tr)
d32 = c(*x)
print("disc first call s", time.time() - t)
worst_e = worst_d = 0
for i, (a, b, r) in enumerate(zip(e32, d32, e64)):
    scale = float(r.abs().max()) or 1.0
    ee = float((a.double() - r).abs().max()) / scale
    de = float((b.double() - r).abs().max()) / scale
    worst_e, worst_d = max(worst_e, ee), max(worst_d, de)
    if de > 1e-3 or ee > 1e-3:
        print(i, tuple(r.shape), "scale", scale, "eager32 vs 64", ee, "disc32 vs 64", de)
print("worst relative-to-scale error vs float64: eager f32", worst_e, "disc f32", worst_d)
