"""What the jobs are configured by (jobs/config.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cuemem.jobs import ConsolidationConfig, DistillationConfig
from cuemem.errors import InvalidArgumentError


@given(st.dictionaries(st.sampled_from(["min_occurrences", "salience_floor", "min_confidence", "key_chars"]),
                       st.one_of(st.integers(-3, 5), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3), st.none())))
def test_consolidation_config_is_valid_or_refused(values: dict[str, object]) -> None:
    """Whatever a user passes, the config is built valid or refused with a typed error."""
    try:
        c = ConsolidationConfig(**values)  # type: ignore[arg-type]
    except InvalidArgumentError:
        return
    assert c.min_occurrences >= 1 and 0 <= c.salience_floor <= 1 and 0 <= c.min_confidence <= 1


@given(st.dictionaries(st.sampled_from(["floor", "min_age_days", "max_sources", "sample"]),
                       st.one_of(st.integers(-3, 5), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3), st.none())))
def test_distillation_config_is_valid_or_refused(values: dict[str, object]) -> None:
    """Whatever a user passes, the config is built valid or refused with a typed error."""
    try:
        c = DistillationConfig(**values)  # type: ignore[arg-type]
    except InvalidArgumentError:
        return
    assert 0 <= c.floor <= 1 and c.min_age_days >= 0 and c.max_sources >= 1 and c.sample >= 1
