"""Which healthy band a model is judged against: per model type and per role.

A holdout keeps last half's model on purpose, so it lags its baseline by design; judged against the
type's band it either pages like a broken baseline or, if the type's band is loosened for it, hides
real trouble on the baseline. So a fleet file can set bands per role, for every type (``"*"``) or for
one type string, on top of the per-type bands:

    role_bands[role][type] -> role_bands[role]["*"] -> bands[type] -> default_bands

A holdout's band is checked when the fleet file loads: for every type a holdout has, it must not be
tighter than its baseline's band (its lag would page), see ``role_band_problems``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fleetdesk.domain.registry import Role
from fleetdesk.domain.stability import HealthBands

ANY_TYPE = "*"
"""The role_bands key that applies to every model type."""

RoleBands = Mapping[Role, Mapping[str, HealthBands]]


def bands_for(
    default: HealthBands,
    by_type: Mapping[str, HealthBands],
    by_role: RoleBands,
    type_string: str,
    role: Role,
) -> HealthBands:
    """The band a model of ``type_string`` and ``role`` is judged against."""
    per_role = by_role.get(role, {})
    found = per_role.get(type_string) or per_role.get(ANY_TYPE)
    return found if found is not None else by_type.get(type_string, default)


def role_band_problems(
    default: HealthBands,
    by_type: Mapping[str, HealthBands],
    by_role: RoleBands,
    holdout_types: Iterable[str],
) -> list[str]:
    """What is wrong with the per-role bands, one sentence each naming the field (empty: nothing).

    ``holdout_types``: the type strings the fleet's holdouts have.
    """
    problems = []
    for type_string in sorted(set(holdout_types)):
        band = bands_for(default, by_type, by_role, type_string, Role.HOLDOUT)
        baseline = bands_for(default, by_type, by_role, type_string, Role.BASELINE)
        if (
            band.ne_max < baseline.ne_max
            or band.calibration_low > baseline.calibration_low
            or band.calibration_high < baseline.calibration_high
        ):
            where = type_string if type_string in by_role.get(Role.HOLDOUT, {}) else ANY_TYPE
            problems.append(
                f"role_bands.holdout.{where}: tighter for {type_string} than its baseline's band (calibration"
                f" {baseline.calibration_low:g}-{baseline.calibration_high:g}, NE <= {baseline.ne_max:g}): a"
                f" holdout lags its baseline by design, so its band may only be as wide or wider (set"
                f" role_bands.holdout.{type_string})"
            )
    return problems
