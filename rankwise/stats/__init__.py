"""Statistics for comparing systems: paired tests, multiple-testing corrections, many-system
tests (ANOVA, Tukey HSD, randomized Tukey HSD), intervals, risk and rank agreement.

Everything here works on per-query values (numpy arrays); :func:`rankwise.compare` runs it on
evaluated runs. scipy is imported by the functions that need it (``pip install rankwise[stats]``).
"""

from .agreement import expected_rbo, kendall_tau, rbo
from .corrections import CORRECTIONS, adjust_p_values
from .intervals import bootstrap_mean_interval, describe, mean_interval, t_interval
from .multi import Anova, anova_blocked, groups, randomized_tukey_hsd, tukey_hsd
from .paired import (PAIRED_TESTS, PairedTest, bootstrap_test, cohens_d, paired_t_test, paired_test,
                     randomization_test, sign_test, wilcoxon_test, win_tie_loss)
from .power import minimum_detectable_effect
from .risk import trisk, urisk

__all__ = [
    "Anova", "CORRECTIONS", "PAIRED_TESTS", "PairedTest", "adjust_p_values", "anova_blocked",
    "bootstrap_mean_interval", "bootstrap_test", "cohens_d", "describe", "expected_rbo", "groups",
    "kendall_tau", "mean_interval", "minimum_detectable_effect", "paired_t_test", "paired_test",
    "randomization_test", "randomized_tukey_hsd", "rbo", "sign_test", "t_interval", "trisk",
    "tukey_hsd", "urisk", "wilcoxon_test", "win_tie_loss",
]
