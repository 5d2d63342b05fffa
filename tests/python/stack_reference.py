"""A float64 re-implementation of hulk.Sequential's stacks of GCNConv, Linear, ReLU and Dropout
(forward, backward, masked cross-entropy and Adam), written from the formulas with dense numpy
matrices, for tests. Dropout masks are the core's counter-based ones (csrc/rng.h), recomputed
here, so training with dropout on is compared step by step."""

import numpy as np

M64 = (1 << 64) - 1
STREAM_DROPOUT = 2  # kStreamDropout in csrc/rng.h


def mix64(z):
    """SplitMix64's finaliser on uint64 arrays (or ints), wrapping like the C++."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def dropout_keep(shape, p, seed, dropout_index, step):
    """The core's mask of Dropout number ``dropout_index`` of a model at optimiser step ``step``."""
    stream = mix64(mix64(mix64(STREAM_DROPOUT) ^ np.uint64(dropout_index)) ^ np.uint64(step))
    index = np.arange(int(np.prod(shape)), dtype=np.uint64)
    h = mix64(mix64(mix64(np.uint64(seed)) ^ stream) ^ index)
    u = (h >> np.uint64(40)).astype(np.float64) / 16777216.0
    return (u >= np.float32(p)).reshape(shape)


def gcn_matrix(n, edges):
    """D^-1/2 (A + I) D^-1/2 of an undirected graph given as (u, v) pairs, dense."""
    a = np.eye(n)
    for u, v in edges:
        a[u, v] += 1.0
        a[v, u] += 1.0
    d = a.sum(axis=1)
    return a / np.sqrt(np.outer(d, d))


def _names(layers):
    """Parameter names of the weighted layers, as the core names them (gcn1, linear1, classifier)."""
    out, gcn, lin = [], 0, 0
    for i, layer in enumerate(layers):
        if layer["kind"] == "gcn":
            gcn += 1
            out.append(f"gcn{gcn}")
        elif layer["kind"] == "linear":
            if i + 1 == len(layers):
                out.append("classifier")
            else:
                lin += 1
                out.append(f"linear{lin}")
        else:
            out.append(None)
    return out


def loss_and_grads(layers, params, a_hat, x, labels, mask, masks):
    """Masked mean cross-entropy of the stack and its gradients by name (float64).
    ``masks[i]``: the boolean keep mask of Dropout entry i, or None (no dropout)."""
    names = _names(layers)
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    h = np.asarray(x, np.float64)
    saved = []
    for i, layer in enumerate(layers):
        kind = layer["kind"]
        saved.append(h)
        if kind == "gcn":
            h = a_hat @ h @ p[names[i] + ".weight"] + p[names[i] + ".bias"]
        elif kind == "linear":
            h = h @ p[names[i] + ".weight"] + p[names[i] + ".bias"]
        elif kind == "relu":
            h = np.maximum(h, 0.0)
        elif kind == "dropout" and masks[i] is not None:
            h = h * masks[i] / (1.0 - np.float64(np.float32(layer["rate"])))
    sel = np.asarray(mask, bool) & (labels >= 0)
    z = h - h.max(axis=1, keepdims=True)
    prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    count = sel.sum()
    loss = float(-np.log(prob[sel, labels[sel]]).sum() / count)
    dz = np.zeros_like(h)
    dz[sel] = prob[sel]
    dz[np.flatnonzero(sel), labels[sel]] -= 1.0
    dz /= count
    grads = {}
    for i in range(len(layers) - 1, -1, -1):
        layer, h_in = layers[i], saved[i]
        kind = layer["kind"]
        if kind == "gcn":
            ah = a_hat @ h_in
            grads[names[i] + ".weight"] = ah.T @ dz
            grads[names[i] + ".bias"] = dz.sum(axis=0, keepdims=True)
            dz = a_hat.T @ dz @ p[names[i] + ".weight"].T
        elif kind == "linear":
            grads[names[i] + ".weight"] = h_in.T @ dz
            grads[names[i] + ".bias"] = dz.sum(axis=0, keepdims=True)
            dz = dz @ p[names[i] + ".weight"].T
        elif kind == "relu":
            dz = dz * (h_in > 0)
        elif kind == "dropout" and masks[i] is not None:
            dz = dz * masks[i] / (1.0 - np.float64(np.float32(layer["rate"])))
    return loss, grads


def dropout_masks(layers, shapes, seed, step, training=True):
    """The keep mask of each Dropout entry (None elsewhere) at ``step``; ``shapes[i]`` is entry i's
    input shape."""
    out, k = [], 0
    for i, layer in enumerate(layers):
        if layer["kind"] == "dropout":
            rate = layer["rate"]
            out.append(dropout_keep(shapes[i], rate, seed, k, step) if training and rate > 0 else None)
            k += 1
        else:
            out.append(None)
    return out


def input_shapes(layers, n, f):
    shapes, width = [], f
    for layer in layers:
        shapes.append((n, width))
        width = layer.get("width", width)
    return shapes


def train(layers, params, a_hat, x, labels, mask, seed, epochs, lr, weight_decay, dropout=True):
    """Full-batch Adam as the core's fit (torch.optim.Adam's L2; a layer's weight_decay replaces
    ``weight_decay``). Returns the training loss of each step, before the step."""
    names = _names(layers)
    lr, weight_decay = float(np.float32(lr)), float(np.float32(weight_decay))  # the core's float32 settings
    decay = {}
    for name, layer in zip(names, layers):
        if name:
            d = layer.get("weight_decay")
            decay[name + ".weight"] = decay[name + ".bias"] = weight_decay if d is None else float(np.float32(d))
    p = {k: np.asarray(v, np.float64).copy() for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(val) for k, val in p.items()}
    shapes = input_shapes(layers, x.shape[0], x.shape[1])
    losses = []
    for step in range(epochs):
        masks = dropout_masks(layers, shapes, seed, step, training=dropout)
        loss, grads = loss_and_grads(layers, p, a_hat, x, labels, mask, masks)
        losses.append(loss)
        t = step + 1
        for k in p:
            g = grads[k] + decay[k] * p[k]
            m[k] = 0.9 * m[k] + 0.1 * g
            v[k] = 0.999 * v[k] + 0.001 * g * g
            p[k] -= lr * (m[k] / (1 - 0.9**t)) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
    return losses
