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


def test_a_time_zone_that_gives_no_valid_offset_is_typed_in_the_job_building_blocks() -> None:
    """A ``now`` whose tzinfo raises or gives 24 hours or more, handed to a schedule, to
    consolidation or to distillation, is a SchemaError naming ``now`` (a bare KeyError or
    ValueError before), read through the one rule the facade uses."""
    from datetime import datetime, time, timedelta, tzinfo

    import pytest

    from cuemem import Daily, Weekly
    from cuemem.errors import SchemaError
    from cuemem.jobs.consolidate import consolidate
    from cuemem.jobs.distill import plan_rungs

    class Failing(tzinfo):
        def utcoffset(self, dt: datetime | None) -> timedelta | None:
            raise KeyError("no such zone")

    class Lying(tzinfo):
        def utcoffset(self, dt: datetime | None) -> timedelta | None:
            return timedelta(hours=30)

    for zone in (Failing(), Lying()):
        now = datetime(2026, 6, 1, 12, tzinfo=zone)
        for call in (lambda: Daily(time(3)).due(None, now), lambda: Weekly(0, time(3)).next_after(None, now),
                     lambda: consolidate([], now), lambda: plan_rungs([], now=now)):
            with pytest.raises(SchemaError, match="no valid offset"):
                call()
