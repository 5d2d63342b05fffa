"""The network of :func:`hulk.plan.generate.generate_cluster`'s ``mode="measured"``: cloud regions
whose round-trip times and throughputs are drawn from fits to public measurements.

Every number below is fitted by a function of this module from a bundled table, and a test
recomputes it (``tests/python/test_plan_generate_measured.py``).

Sources
-------
* **RTT from distance**: ``hulk/data/cloud_rtt.json``, IBM Cloud's published inter-region latency
  table (10 regions on four continents, 27 Jul - 25 Aug 2024; github.com/ibm-cloud-docs/vpc,
  ``_include-segments/network-latency.md``). :func:`fit_rtt_model`: ordinary least squares of the
  45 pairs' RTT (the mean of both directions) on the great-circle distance gives
  ``RTT_A_MS + RTT_B_MS_PER_KM * km`` = 14.514 ms + 0.015643 ms/km (Pearson r 0.89). The slope is 1.56 times the
  round trip of light in fibre (2 km / (200,000 km/s) = 0.01 ms/km): paths are longer than great
  circles; the intercept is the overhead of the ends (routers, hypervisors). The spread around the
  fit, the standard deviation of ln(measured / fitted), is ``RTT_SIGMA`` = 0.268.
* **Throughput**: ``hulk/data/cloud_throughput_sample.json``, 112 rows of the Skyplane project's
  measured inter-region throughput grids between AWS, Azure and GCP VMs (iperf3, 64 TCP
  connections; Jain et al., "Skyplane: Optimizing Transfer Cost and Throughput Using Cloud-Aware
  Overlays", NSDI 2023; github.com/skyplane-project/skyplane). Over the sample the throughput's
  median is 4.12 Gbit/s, its quartiles 3.31 and 5.58, its range 0.93-15.6 Gbit/s, and the standard
  deviation of its logarithm 0.508 (:func:`fit_throughput_model`).
* **Throughput and RTT**: for each sample row the RTT is the fit above at the great-circle
  distance of the two regions' cities (coordinates in the sample file). Least squares of
  ln(throughput) on ln(RTT) gives a slope ``THROUGHPUT_RTT_SLOPE`` = -0.452 (TCP's throughput falls
  with the round trip), ``THROUGHPUT_AT_RTT_REF_GBPS`` = 3.72 Gbit/s at the sample's median RTT
  ``RTT_REF_MS`` = 135.8 ms, and a residual standard deviation ``THROUGHPUT_SIGMA`` = 0.372; the Spearman
  correlation of throughput and distance in the sample is -0.76. Far from independent (the
  project's issue 17 calls the two "only weakly related"; this sample does not bear that out).
  With the measured coupling the Spearman correlation of RTT and throughput over a drawn
  cluster's region pairs is about -0.6 (the RTT's own jitter loosens it). ``rtt_coupling`` in [0, 1]
  scales the slope down (0: throughput independent of RTT) while keeping the spread of
  ln(throughput) by widening the residual (see :func:`throughput_gbps`).
* **Range**: drawn throughputs are clipped to [``THROUGHPUT_MIN_GBPS``, ``THROUGHPUT_MAX_GBPS``] =
  [0.07, 26] Gbit/s, the range reported for the full Skyplane grids in the project's issue 17 (not
  re-measured here: the bundled sample spans 0.93-15.6).
* **Inside a region**: the round trip between machines of one zone is 0.09 ms (the same IBM table,
  inter-AZ section, Dallas 1 to Dallas 1), so the one-way latency is ``LAN_LATENCY_MS`` = 0.045 ms.
  The bandwidth is ``LAN_BANDWIDTH_GBPS`` = 100 Gbit/s, the documented network bandwidth of 8-GPU
  A100 cloud machines: GCP a2-highgpu-8g (cloud.google.com/compute/docs/gpus/gpu-network-bandwidth,
  100 Gbps) and AWS p3dn.24xlarge (aws.amazon.com/ec2/instance-types/p3/, 100 Gbps); p4d.24xlarge
  has 400 Gbps (aws.amazon.com/ec2/instance-types/p4/), so 100 is the lower of the documented
  figures. A documented capacity, not a measurement.

The cost model's latency is one way (``csrc/plan/cluster.h``: "one-way time of a small
message"), so a region pair's ``base_latency_ms`` is half its drawn RTT.

Sites
-----
Regions are not limited to the bundled cities: each region is a bundled city (uniform draw, with
replacement) moved by a random offset of up to ``SITE_SPREAD_KM`` = 500 km in a uniform
direction (an assumption: cloud regions cluster around large cities, several per metropolitan
area or country). Over the 40 bundled cities the fitted RTT at the median pair distance
(8,374 km) is 146 ms, and the median RTT of drawn clusters is about 140 ms: near the 150 ms of
issue 17 and the median of Skyplane's measured RTT grid (``profiles/latency.csv``; the 78
measured rows among its first 16,000 characters, read by hand, have a median near 159 ms).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import InputError
from .cluster import EARTH_RADIUS_KM, cities, great_circle_km

__all__ = [
    "LAN_BANDWIDTH_GBPS",
    "LAN_LATENCY_MS",
    "RTT_A_MS",
    "RTT_B_MS_PER_KM",
    "RTT_SIGMA",
    "SITE_SPREAD_KM",
    "THROUGHPUT_MAX_GBPS",
    "THROUGHPUT_MIN_GBPS",
    "THROUGHPUT_RTT_SLOPE",
    "THROUGHPUT_SIGMA",
    "THROUGHPUT_AT_RTT_REF_GBPS",
    "RTT_REF_MS",
    "LN_RTT_VAR",
    "draw_sites",
    "fit_rtt_model",
    "fit_throughput_model",
    "rtt_ms",
    "pair_throughput_gbps",
    "throughput_gbps",
]

_DATA = Path(__file__).resolve().parent.parent / "data"
FIBRE_RTT_MS_PER_KM = 0.01   # 2 km of fibre at 200,000 km/s (refractive index about 1.5)

# fit_rtt_model(), rounded to 5 significant digits (the test checks the rounding)
RTT_A_MS = 14.514
RTT_B_MS_PER_KM = 0.015643
RTT_SIGMA = 0.26760

# fit_throughput_model(), rounded to 5 significant digits
THROUGHPUT_RTT_SLOPE = -0.45197
THROUGHPUT_SIGMA = 0.37161
RTT_REF_MS = 135.83              # median fitted RTT of the sample's pairs
THROUGHPUT_AT_RTT_REF_GBPS = 3.7223  # exp(fitted ln throughput at RTT_REF_MS)
LN_RTT_VAR = 0.59340             # variance of ln(fitted RTT) over the sample's pairs

THROUGHPUT_MIN_GBPS, THROUGHPUT_MAX_GBPS = 0.07, 26.0
LAN_LATENCY_MS = 0.045
LAN_BANDWIDTH_GBPS = 100.0
SITE_SPREAD_KM = 500.0


@lru_cache(maxsize=None)
def _load(name: str, version: str) -> dict:
    doc = json.loads((_DATA / name).read_text(encoding="utf-8"))
    if doc.get("version") != version:
        raise InputError(f"{name}: version must be {version!r}, got {doc.get('version')!r}")
    return doc


def fit_rtt_model() -> dict:
    """Refit the RTT rule from ``hulk/data/cloud_rtt.json``.

    Keys: ``a`` (ms), ``b`` (ms/km), ``sigma`` (sd of ln(measured / fitted)), ``pairs`` (list of
    ``(region, region, km, rtt_ms)``), ``r`` (Pearson correlation of distance and RTT),
    ``same_zone_rtt_ms``.
    """
    doc = _load("cloud_rtt.json", "hulk-cloud-rtt/1")
    regions, m = doc["regions"], np.asarray(doc["rtt_ms"], dtype=np.float64)
    lat = np.array([r["lat"] for r in regions])
    lon = np.array([r["lon"] for r in regions])
    a, b = np.triu_indices(len(regions), k=1)
    rtt = (m[a, b] + m[b, a]) / 2
    km = great_circle_km(lat[a], lon[a], lat[b], lon[b])
    design = np.column_stack([np.ones_like(km), km])
    coef, *_ = np.linalg.lstsq(design, rtt, rcond=None)
    resid = np.log(rtt / (design @ coef))
    return {"a": float(coef[0]), "b": float(coef[1]), "sigma": float(resid.std(ddof=2)),
            "pairs": [(regions[i]["name"], regions[j]["name"], float(k), float(t))
                      for i, j, k, t in zip(a.tolist(), b.tolist(), km, rtt)],
            "r": float(np.corrcoef(km, rtt)[0, 1]), "same_zone_rtt_ms": float(doc["same_zone_rtt_ms"])}


def fit_throughput_model() -> dict:
    """Refit the throughput rule from ``hulk/data/cloud_throughput_sample.json`` (and the RTT
    rule's ``a``, ``b`` for each row's RTT).

    Keys: ``slope``, ``sigma`` (residual sd), ``rtt_ref_ms``, ``at_rtt_ref_gbps``, ``ln_rtt_var``,
    ``gbps`` (the sample), ``rtt_ms`` (fitted RTT per row), ``median``, ``quartiles``,
    ``ln_sd`` (sd of ln throughput), ``spearman_km`` (Spearman of distance and throughput).
    """
    doc = _load("cloud_throughput_sample.json", "hulk-cloud-throughput/1")
    where = doc["region_coordinates"]
    gbps = np.array([row[2] for row in doc["rows"]], dtype=np.float64)
    src = np.array([where[row[0]] for row in doc["rows"]])
    dst = np.array([where[row[1]] for row in doc["rows"]])
    km = great_circle_km(src[:, 0], src[:, 1], dst[:, 0], dst[:, 1])
    rtt = RTT_A_MS + RTT_B_MS_PER_KM * km
    ln_rtt, ln_bw = np.log(rtt), np.log(gbps)
    design = np.column_stack([np.ones_like(ln_rtt), ln_rtt])
    coef, *_ = np.linalg.lstsq(design, ln_bw, rcond=None)
    resid = ln_bw - design @ coef
    ref = float(np.median(rtt))
    return {"slope": float(coef[1]), "sigma": float(resid.std(ddof=2)), "rtt_ref_ms": ref,
            "at_rtt_ref_gbps": float(np.exp(coef[0] + coef[1] * np.log(ref))),
            "ln_rtt_var": float(ln_rtt.var(ddof=1)), "gbps": gbps, "rtt_ms": rtt,
            "median": float(np.median(gbps)), "quartiles": tuple(np.quantile(gbps, [0.25, 0.75]).tolist()),
            "ln_sd": float(ln_bw.std(ddof=1)), "spearman_km": float(_spearman(km, gbps))}


def _spearman(x, y) -> float:
    rx = np.argsort(np.argsort(x)).astype(np.float64)
    ry = np.argsort(np.argsort(y)).astype(np.float64)
    return float(np.corrcoef(rx, ry)[0, 1])


def draw_sites(rng, n_regions: int) -> tuple[list, np.ndarray, np.ndarray]:
    """``n_regions`` region sites: (names, lat [R], lon [R]). Each is a bundled city moved by up to
    ``SITE_SPREAD_KM`` in a uniform direction; names are ``"<city>-<k>"``, k counting the sites
    drawn near that city from 0. Sorted by name so the order does not depend on the draw order."""
    table = cities()
    pick = rng.integers(0, len(table), size=n_regions)
    bearing = rng.uniform(0.0, 2 * np.pi, size=n_regions)
    # uniform over the disc: radius ~ sqrt(U); small-disc approximation of the spherical cap
    delta = SITE_SPREAD_KM * np.sqrt(rng.random(n_regions)) / EARTH_RADIUS_KM
    lat0 = np.radians([table[k]["lat"] for k in pick])
    lon0 = np.radians([table[k]["lon"] for k in pick])
    lat = np.arcsin(np.sin(lat0) * np.cos(delta) + np.cos(lat0) * np.sin(delta) * np.cos(bearing))
    lon = lon0 + np.arctan2(np.sin(bearing) * np.sin(delta) * np.cos(lat0),
                            np.cos(delta) - np.sin(lat0) * np.sin(lat))
    lon = (lon + np.pi) % (2 * np.pi) - np.pi
    seen: dict = {}
    names = []
    for k in pick.tolist():
        c = table[k]["name"]
        names.append(f"{c}-{seen.get(c, 0)}")
        seen[c] = seen.get(c, 0) + 1
    order = sorted(range(n_regions), key=lambda i: names[i])
    return ([names[i] for i in order], np.round(np.degrees(lat), 4)[order],
            np.round(np.degrees(lon), 4)[order])


def rtt_ms(rng, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Symmetric ``[R, R]`` round-trip times (ms) between sites: the fitted line times a
    log-normal factor exp(N(0, RTT_SIGMA)) per pair, never below the round trip of light in fibre
    along the great circle; the diagonal is the same-zone round trip 2 * LAN_LATENCY_MS."""
    R = lat.size
    km = great_circle_km(lat[:, None], lon[:, None], lat[None, :], lon[None, :])
    iu = np.triu_indices(R, k=1)
    out = np.empty((R, R))
    drawn = (RTT_A_MS + RTT_B_MS_PER_KM * km[iu]) * np.exp(rng.normal(0.0, RTT_SIGMA, size=iu[0].size))
    out[iu] = np.maximum(drawn, FIBRE_RTT_MS_PER_KM * km[iu])
    out.T[iu] = out[iu]
    np.fill_diagonal(out, 2 * LAN_LATENCY_MS)
    return out


def pair_throughput_gbps(rng, rtt, rtt_coupling: float) -> np.ndarray:
    """Throughputs (Gbit/s) drawn for round trips ``rtt`` (ms, any shape, same shape out):

    ln T = ln T_ref + c * slope * (ln RTT - ln RTT_ref) + N(0, s),
    s^2 = THROUGHPUT_SIGMA^2 + (1 - c^2) slope^2 LN_RTT_VAR,

    with ``c = rtt_coupling``: c = 1 is the measured fit; smaller c weakens the tie to RTT and
    widens the residual by the variance it no longer explains, so the spread of ln T over
    measured-like pairs stays that of the sample. Clipped to [THROUGHPUT_MIN_GBPS,
    THROUGHPUT_MAX_GBPS]."""
    rtt = np.asarray(rtt, dtype=np.float64)
    slope = rtt_coupling * THROUGHPUT_RTT_SLOPE
    sd = np.sqrt(THROUGHPUT_SIGMA ** 2 + (1 - rtt_coupling ** 2) * THROUGHPUT_RTT_SLOPE ** 2 * LN_RTT_VAR)
    ln_t = (np.log(THROUGHPUT_AT_RTT_REF_GBPS) + slope * (np.log(rtt) - np.log(RTT_REF_MS))
            + rng.normal(0.0, sd, size=rtt.shape))
    return np.clip(np.exp(ln_t), THROUGHPUT_MIN_GBPS, THROUGHPUT_MAX_GBPS)


def throughput_gbps(rng, rtt: np.ndarray, rtt_coupling: float) -> np.ndarray:
    """Symmetric ``[R, R]`` throughputs (Gbit/s) for the round trips ``rtt`` ``[R, R]``, one
    :func:`pair_throughput_gbps` draw per region pair; the diagonal is LAN_BANDWIDTH_GBPS."""
    R = rtt.shape[0]
    iu = np.triu_indices(R, k=1)
    out = np.empty((R, R))
    out[iu] = pair_throughput_gbps(rng, rtt[iu], rtt_coupling)
    out.T[iu] = out[iu]
    np.fill_diagonal(out, LAN_BANDWIDTH_GBPS)
    return out
