"""The PyTorch 2 front end: a torch.compile backend that partitions ATen FX
graphs into supported regions, imports each into the `disc` dialect (with
symbolic dims) and compiles it; everything else runs in eager PyTorch."""
