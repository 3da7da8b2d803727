"""DP Frank-Wolfe on the λ-ℓ1 ball with private screening rules (Khanna et al., 2023, 2025).

Public API
----------
dp_frank_wolfe
    Talwar et al.'s private Frank-Wolfe (report-noisy-min over the 2p vertices ±λe_j).
adp_screen
    DP-FW + Gaussian-noised screening of all features at chosen iterations (Khanna et al., 2025).
rnm_screen
    DP-FW + report-noisy-min screening of one feature per iteration (Khanna et al. (2025) Alg. 2).
screening_scores, safe_screen
    Raj et al.'s (non-private) safe rule, vectorised over all features.
fw_noise, rnm_noise, adp_noise, score_sensitivity, gradient_sensitivity
    The noise calibrations and sensitivities, for inspection.
ScreeningResult, NoiseCalibration
    What the three methods return / how each part was accounted.

Every method takes ``calibration="rigorous"`` (default: replace-one neighbours, sensitivity
bounds proven in the docstrings) or ``calibration="seed"`` (the papers' noise formulas, kept to
reproduce their experiments; no guarantee is claimed). See ``docs/screening.md``.
"""

from .frank_wolfe import (
                          NoiseCalibration,
                          ScreeningResult,
                          advanced_composition,
                          dp_frank_wolfe,
                          fw_noise,
)
from .losses import LogisticLoss, Loss, SquaredLoss, get_loss, gradient_sensitivity
from .rules import (
                          adp_noise,
                          adp_screen,
                          rnm_noise,
                          rnm_screen,
                          safe_screen,
                          score_sensitivity,
                          screening_scores,
)

__all__ = ["dp_frank_wolfe", "adp_screen", "rnm_screen", "screening_scores", "safe_screen",
           "fw_noise", "rnm_noise", "adp_noise", "score_sensitivity", "gradient_sensitivity",
           "advanced_composition", "ScreeningResult", "NoiseCalibration", "Loss", "SquaredLoss",
           "LogisticLoss", "get_loss"]
