"""hulk.launch: run an exported plan's training loop on PyTorch (``python -m hulk.launch job.json``).

The bundle format (:mod:`hulk.plan.bundle`) needs no torch; the training loop
(:mod:`hulk.launch.run`) imports torch when it runs (``pip install hulk[torch]``).
"""
